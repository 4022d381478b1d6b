/**
 * Bodies that are not what a route accepts: malformed multipart (no boundary, truncated, empty), a
 * tus content type outside tus, text/plain that looks like JSON. Each is a 400 or a 415 in the
 * envelope, never a 500, and nothing reaches the database.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { bytesOf, postMultipart } from '../harness/files.js'
import { V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'

const server = await startTestServer()
const alice = await server.registerUser()

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: any
}

/** Sends exactly these bytes with these headers (Content-Length as given, or the body's). */
function post(path: string, headers: Record<string, string>, body: Buffer | string = ''): Promise<Answer> {
  const { port } = new URL(server.url)
  const bytes = Buffer.from(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { authorization: `Bearer ${alice.token}`, 'content-length': String(bytes.length), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString()
          let parsed: unknown = text
          try {
            parsed = JSON.parse(text)
          } catch {
            // not JSON: the assertion below names it
          }
          resolve({ status: res.statusCode!, headers: res.headers, body: parsed })
        })
      },
    )
    req.on('error', reject)
    req.end(bytes)
  })
}

const BOUNDARY = 'tern-boundary'
const part = (name: string, value: string, filename?: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n` +
  `${filename ? 'Content-Type: application/octet-stream\r\n' : ''}\r\n${value}\r\n`

const UPLOAD_ROUTES = ['/files/upload', '/uploads/multipart']

test('multipart without a boundary is 400, and the body is not read to its end', async () => {
  for (const path of UPLOAD_ROUTES) {
    assertError(await post(path, { 'content-type': 'multipart/form-data' }, part('file', 'abc', 'a.txt')), 400, 'validation_error', path)
    assertError(await post(path, { 'content-type': 'multipart/form-data; boundary=' }, 'x'), 400, 'validation_error', path)
  }
})

test('a truncated multipart body is 400', async () => {
  const cut = part('file', bytesOf(4096, 'truncated').toString('latin1'), 'a.bin').slice(0, 300)
  assertError(
    await post('/files/upload', { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, cut),
    400,
    'validation_error',
    'upload',
  )
  const chunk = part('session_id', 'x') + part('offset', '0') + part('chunk', 'abcdef', 'c.bin').slice(0, 60)
  assertError(
    await post('/uploads/multipart', { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, chunk),
    400,
    'validation_error',
    'chunk',
  )
})

test('no body at all is 400', async () => {
  for (const path of UPLOAD_ROUTES) {
    assertError(await post(path, {}), 400, 'validation_error', `${path} with no content type`)
    assertError(
      await post(path, { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }),
      400,
      'validation_error',
      `${path} empty multipart`,
    )
    assertError(await post(path, { 'content-type': 'application/json' }), 400, 'validation_error', `${path} empty JSON`)
  }
})

test('a body of a type the route does not take is 415 unsupported_media_type', async () => {
  const json = JSON.stringify({ file_name: 'a.txt', size: 3, mime_type: 'text/plain' })
  for (const path of [...UPLOAD_ROUTES, '/uploads/complete', `${V2}/messages/send`, `${V2}/groups/create`, '/api/auth/login']) {
    for (const type of ['text/plain', 'application/offset+octet-stream', 'application/x-www-form-urlencoded', 'application/xml']) {
      assertError(await post(path, { 'content-type': type }, json), 415, 'unsupported_media_type', `${type} to ${path}`)
    }
  }
  // nothing was started: the JSON-looking text/plain body never reached the repo
  const rows = await server.ctx.db.selectFrom('upload_sessions').selectAll().where('owner_id', '=', alice.id).execute()
  assert.deepEqual(rows, [])
})

test('controls: the same routes take their real bodies', async () => {
  const started = await post(
    '/uploads/multipart',
    { 'content-type': 'application/json' },
    JSON.stringify({ file_name: 'a.txt', size: 3, mime_type: 'text/plain' }),
  )
  assert.equal(started.status, 200, JSON.stringify(started.body))
  assert.equal(typeof started.body.data.session_id, 'string')
  const uploaded = await postMultipart(server, alice, '/files/upload', { name: 'file', bytes: Buffer.from('hello'), filename: 'h.txt' })
  assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body))
  const sent = await post(
    `${V2}/messages/send`,
    { 'content-type': 'application/json; charset=utf-8' },
    JSON.stringify({ receiver_id: alice.id, content: 'note to self' }),
  )
  assert.equal(sent.status, 200, JSON.stringify(sent.body))
})
