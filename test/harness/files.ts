/** Helpers of the files and uploads test files: multipart uploads, verbatim requests, what is on disk. */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import type { TestServer, TestUser } from './server.js'

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/** Deterministic, incompressible-looking bytes (distinct per seed), so no two tests share content by accident. */
export function bytesOf(size: number, seed: string): Buffer {
  const out = Buffer.alloc(size)
  let block = createHash('sha256').update(seed).digest()
  for (let at = 0; at < size; at += block.length) {
    block.copy(out, at)
    block = createHash('sha256').update(block).digest()
  }
  return out
}

export interface FetchResult {
  status: number
  headers: Headers
  body: any
}

/** POST multipart `fields` then a file part to `path` as `user` (fetch builds the body). */
export async function postMultipart(
  server: TestServer,
  user: TestUser | null,
  url: string,
  part: { name: string; bytes: Buffer; filename?: string; type?: string },
  fields: Record<string, string> = {},
): Promise<FetchResult> {
  const form = new FormData()
  for (const [key, value] of Object.entries(fields)) form.append(key, value)
  form.append(
    part.name,
    new Blob([new Uint8Array(part.bytes)], { type: part.type ?? 'application/octet-stream' }),
    part.filename ?? 'file.bin',
  )
  const res = await fetch(`${server.url}${url}`, {
    method: 'POST',
    body: form,
    headers: user ? { authorization: `Bearer ${user.token}` } : {},
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text.startsWith('{') ? JSON.parse(text) : text }
}

/** Uploads through POST /files/upload and returns the file (asserting success). */
export async function upload(server: TestServer, user: TestUser, bytes: Buffer, filename = 'file.bin', type?: string) {
  const res = await postMultipart(server, user, '/files/upload', { name: 'file', bytes, filename, type })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.data
}

export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
}

/** A node:http request whose path goes out exactly as written (fetch and URL would normalize `..`). */
export function rawRequest(
  server: TestServer,
  rawPath: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: rawPath, method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk) => chunks.push(chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** Every file (or symlink) under the server's uploads directory, relative to it. */
export function storedFiles(server: TestServer, area = ''): string[] {
  const root = path.join(server.dataDir, 'uploads', area)
  if (!fs.existsSync(root)) return []
  return (fs.readdirSync(root, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => !entry.isDirectory())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
}
