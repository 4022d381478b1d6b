/**
 * Load process: uploads one file from disk to Tern, streamed (never held in memory), either in one
 * multipart POST /files/upload or as chunks of POST /uploads/multipart, then /uploads/complete.
 * Replies with the elapsed time and the server's answer (the file's size and hash).
 */
import fs from 'node:fs'
import http from 'node:http'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { serve } from './ipc.js'

export interface UploadSpec {
  port: number
  token: string
  file: string
  mode: 'single' | 'chunked'
  chunkBytes: number
}

export interface UploadResult {
  ms: number
  size: number
  hash: string
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

/** One request whose body is `parts` (buffers and file streams) in order; resolves with the parsed JSON answer. */
function post(
  spec: UploadSpec,
  path: string,
  headers: Record<string, string | number>,
  parts: (Buffer | (() => Readable))[],
): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: spec.port, path, method: 'POST', agent, headers: { authorization: `Bearer ${spec.token}`, ...headers } },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk) => chunks.push(chunk))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString()
          if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode} ${text.slice(0, 300)}`))
          else resolve(JSON.parse(text).data)
        })
      },
    )
    req.on('error', reject)
    ;(async () => {
      for (const part of parts) {
        if (Buffer.isBuffer(part)) req.write(part)
        else await pipeline(part(), req, { end: false })
      }
      req.end()
    })().catch(reject)
  })
}

const BOUNDARY = 'tern-bench-upload-boundary'

/** A multipart body: `fields`, then the file part `name` of `length` bytes from `stream`. */
function multipart(fields: Record<string, string>, name: string, length: number, stream: () => Readable) {
  const head = Buffer.from(
    Object.entries(fields)
      .map(([key, value]) => `--${BOUNDARY}\r\ncontent-disposition: form-data; name="${key}"\r\n\r\n${value}\r\n`)
      .join('') +
      `--${BOUNDARY}\r\ncontent-disposition: form-data; name="${name}"; filename="bench.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  )
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`)
  return {
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': head.length + length + tail.length },
    parts: [head, stream, tail],
  }
}

async function upload(spec: UploadSpec): Promise<UploadResult> {
  const size = fs.statSync(spec.file).size
  const started = performance.now()
  let file: { size: number; hash: string }
  if (spec.mode === 'single') {
    const body = multipart({}, 'file', size, () => fs.createReadStream(spec.file, { highWaterMark: 256 * 1024 }))
    file = await post(spec, '/files/upload', body.headers, body.parts)
  } else {
    const json = (body: unknown) => ({ headers: { 'content-type': 'application/json' }, parts: [Buffer.from(JSON.stringify(body))] })
    const start = json({ file_name: 'bench.bin', size })
    const { session_id } = await post(spec, '/uploads/multipart', start.headers, start.parts)
    for (let offset = 0; offset < size; offset += spec.chunkBytes) {
      const end = Math.min(size, offset + spec.chunkBytes)
      const read = () => fs.createReadStream(spec.file, { start: offset, end: end - 1, highWaterMark: 256 * 1024 })
      const body = multipart({ session_id, offset: String(offset) }, 'chunk', end - offset, read)
      await post(spec, '/uploads/multipart', body.headers, body.parts)
    }
    const done = json({ session_id })
    file = await post(spec, '/uploads/complete', done.headers, done.parts)
  }
  return { ms: performance.now() - started, size: file.size, hash: file.hash }
}

serve(upload)
