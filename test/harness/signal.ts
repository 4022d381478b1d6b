/** A client of the video service's signaling socket (src/video/protocol.ts), and a video service for tests. */
import { after } from 'node:test'
import pino from 'pino'
import WebSocket from 'ws'
import { loadConfig } from '../../src/config.js'
import { startVideoService, type VideoService } from '../../src/video/server.js'
import { videoSecret } from '../../src/video/secret.js'
import { signTicket } from '../../src/video/ticket.js'
import { tempDir } from './database.js'

export const TEST_VIDEO_SECRET = 'test video secret, 32 characters or more, not for production'

/** A video service on a free port with the test secret; closed when the test file ends. */
export async function startTestVideo(
  env: Record<string, string> = {},
): Promise<VideoService & { secret: Buffer; ticket(claims: Partial<Parameters<typeof signTicket>[1]>): string }> {
  const config = loadConfig({
    DATA_DIR: tempDir('tern-video-'),
    VIDEO_SECRET: TEST_VIDEO_SECRET,
    VIDEO_PORT: '0',
    LOG_LEVEL: 'silent',
    ...env,
  })
  const service = await startVideoService(config, { log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await service.close()
  }
  after(close)
  const secret = videoSecret(config)
  return {
    ...service,
    close,
    secret,
    ticket: (claims) =>
      signTicket(secret, { room: 'room1', uid: 1, username: 'alice', exp: Date.now() + 60_000, audio_only: false, cb: null, ...claims }),
  }
}

const opened = new Set<SignalClient>()
after(async () => {
  await Promise.all([...opened].map((c) => c.close()))
})

export class SignalClient {
  readonly frames: any[] = []
  readonly received: any[] = []
  closed: { code: number; reason: string } | null = null
  private waiters: (() => void)[] = []

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      const frame = JSON.parse(String(raw))
      this.frames.push(frame)
      this.received.push(frame)
      for (const wake of this.waiters.splice(0)) wake()
    })
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) }
      for (const wake of this.waiters.splice(0)) wake()
    })
    ws.on('error', () => undefined)
  }

  /** Opens a socket to `url` (http(s):// or ws(s)://, the signaling path included or not). */
  static async open(url: string): Promise<SignalClient> {
    let target = url.replace(/^http/, 'ws')
    if (!/\/signal$/.test(new URL(target).pathname)) target = `${target.replace(/\/+$/, '')}/signal`
    const ws = new WebSocket(target)
    const client = new SignalClient(ws)
    opened.add(client)
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve())
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)))
      ws.once('error', reject)
    })
    return client
  }

  /** Opens a socket and joins `room` with `ticket`; answers the client and its joined frame. */
  static async join(url: string, room: string, ticket: string): Promise<{ client: SignalClient; joined: any }> {
    const client = await SignalClient.open(url)
    client.send({ type: 'join', room_id: room, ticket })
    return { client, joined: await client.next('joined') }
  }

  send(frame: unknown) {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame))
  }

  private async wait(until: number): Promise<void> {
    const left = until - Date.now()
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, left))
      this.waiters.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  /** The next not-yet-taken frame of this type. */
  async next(type: string, timeoutMs = 3000): Promise<any> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const index = this.frames.findIndex((f) => f.type === type)
      if (index >= 0) return this.frames.splice(index, 1)[0]
      if (this.closed)
        throw new Error(
          `socket closed (${this.closed.code} ${this.closed.reason}) while waiting for ${type}; have ${JSON.stringify(this.frames)}`,
        )
      if (Date.now() >= deadline)
        throw new Error(`no ${type} frame within ${timeoutMs} ms; have: ${JSON.stringify(this.frames.map((f) => f.type))}`)
      await this.wait(deadline)
    }
  }

  /** Takes every frame of this type that arrived within `ms`. */
  async drain(type: string, ms = 200): Promise<any[]> {
    await new Promise((resolve) => setTimeout(resolve, ms))
    const taken = this.frames.filter((f) => f.type === type)
    this.frames.splice(0, this.frames.length, ...this.frames.filter((f) => f.type !== type))
    return taken
  }

  async closing(timeoutMs = 3000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs
    while (!this.closed) {
      if (Date.now() >= deadline) throw new Error(`the socket was not closed within ${timeoutMs} ms`)
      await this.wait(deadline)
    }
    return this.closed
  }

  async close() {
    if (this.closed || this.ws.readyState === WebSocket.CLOSED) return
    this.ws.close()
    await this.closing().catch(() => this.ws.terminate())
  }
}
