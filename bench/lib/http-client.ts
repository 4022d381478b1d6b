/**
 * A minimal keep-alive HTTP/1.1 client for load generation: requests are pre-encoded buffers and
 * responses are framed by Content-Length only (Fastify always sends it for JSON). Much cheaper per
 * request than node:http, so one load core can outrun one server core.
 */
import net from 'node:net'

export interface RequestSpec {
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  /** JSON body */
  body?: unknown
}

export interface Response {
  status: number
  body: Buffer
}

export function encodeRequest(host: string, spec: RequestSpec): Buffer {
  const body = spec.body === undefined ? null : Buffer.from(JSON.stringify(spec.body))
  const headers: Record<string, string> = { host, ...spec.headers }
  if (body) {
    headers['content-type'] = 'application/json'
    headers['content-length'] = String(body.length)
  }
  const head = `${spec.method} ${spec.path} HTTP/1.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`
  return body ? Buffer.concat([Buffer.from(head), body]) : Buffer.from(head)
}

const HEADER_END = Buffer.from('\r\n\r\n')

export class HttpConnection {
  private buffer: Buffer = Buffer.alloc(0)
  /** start of the body in `buffer` once the head has been read, else -1 */
  private bodyStart = -1
  private bodyLength = 0
  private status = 0
  private pending: { resolve: (response: Response) => void; reject: (error: Error) => void } | null = null

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true)
    socket.on('data', (chunk) => this.onData(chunk))
    socket.on('error', (error) => this.fail(error))
    socket.on('close', () => this.fail(new Error('connection closed by the server')))
  }

  static connect(port: number, host = '127.0.0.1'): Promise<HttpConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host }, () => {
        socket.off('error', reject)
        resolve(new HttpConnection(socket))
      })
      socket.once('error', reject)
    })
  }

  /** Sends one request; one at a time per connection (no pipelining). */
  request(encoded: Buffer): Promise<Response> {
    if (this.pending) throw new Error('a request is already in flight on this connection')
    // a connection the server closed meanwhile would never answer: fail the request, never hang
    if (this.socket.destroyed || !this.socket.writable) return Promise.reject(new Error('connection closed by the server'))
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject }
      this.socket.write(encoded)
    })
  }

  close() {
    this.socket.destroy()
  }

  private onData(chunk: Buffer) {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk
    if (this.bodyStart < 0) {
      const end = this.buffer.indexOf(HEADER_END)
      if (end < 0) return
      const head = this.buffer.toString('latin1', 0, end)
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
      if (!length) return this.fail(new Error(`response without content-length:\n${head}`))
      this.status = Number(head.slice(9, 12))
      this.bodyStart = end + HEADER_END.length
      this.bodyLength = Number(length[1])
    }
    const bodyEnd = this.bodyStart + this.bodyLength
    if (this.buffer.length < bodyEnd) return
    const response = { status: this.status, body: this.buffer.subarray(this.bodyStart, bodyEnd) }
    this.buffer = this.buffer.subarray(bodyEnd)
    this.bodyStart = -1
    const pending = this.pending
    this.pending = null
    pending?.resolve(response)
  }

  private fail(error: Error) {
    const pending = this.pending
    this.pending = null
    pending?.reject(error)
  }
}
