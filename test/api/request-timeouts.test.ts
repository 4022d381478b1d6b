/**
 * HTTP_REQUEST_TIMEOUT_SECONDS against slow and stalled clients, at 1 s here: headers and an
 * ordinary body must arrive within it; an upload may take as long as its bytes keep coming, but
 * not pause for that long; WebSockets are never cut.
 */
import assert from 'node:assert/strict'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'node:test'
import { registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const server = await startTestServer({ env: { HTTP_REQUEST_TIMEOUT_SECONDS: '1' } })
const { port } = new URL(server.url)

interface Exchange {
  /** everything the server sent */
  answer: string
  /** ms from the first byte sent until the server closed (or the client gave up at 10 s) */
  took: number
  /** the server closed the connection */
  closed: boolean
}

/**
 * Sends `pieces` over a raw connection, `gapMs` apart (a string, or a pause of that many ms when a
 * number), then waits for the server to answer and close, for at most 10 s.
 */
async function exchange(pieces: (string | Buffer | number)[], gapMs = 0): Promise<Exchange> {
  const client = net.connect(Number(port), '127.0.0.1')
  await new Promise((resolve) => client.once('connect', resolve))
  const started = Date.now()
  let answer = ''
  client.on('data', (chunk) => (answer += chunk))
  const closed = new Promise<boolean>((resolve) => {
    client.on('close', () => resolve(true))
    client.on('error', () => {})
    setTimeout(() => resolve(false), 10_000).unref()
  })
  for (const piece of pieces) {
    if (client.destroyed) break
    if (typeof piece === 'number') await sleep(piece)
    else client.write(piece)
    if (gapMs) await sleep(gapMs)
  }
  const didClose = await closed
  client.destroy()
  return { answer, took: Date.now() - started, closed: didClose }
}

/** A multipart body with one file part of `bytes`, cut into `count` pieces. */
function multipart(bytes: Buffer, count: number) {
  const boundary = 'tern-slow-boundary'
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ])
  const size = Math.ceil(body.length / count)
  const pieces = Array.from({ length: count }, (_, i) => body.subarray(i * size, (i + 1) * size))
  return { boundary, body, pieces }
}

const head = (line: string, token: string, headers: Record<string, string | number>) =>
  `${line} HTTP/1.1\r\nHost: tern\r\nAuthorization: Bearer ${token}\r\n` +
  Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('') +
  '\r\n'

test('an upload may take longer than the limit while its bytes keep coming; paused for the limit, it is 408', async () => {
  const [alice] = await registerUsers(server, 1)
  const socket = await TestSocket.connect(server.url, alice.token)

  // 3 s of steady bytes, at 1 s allowed: it is stored whole
  const slow = multipart(Buffer.alloc(12_000, 7), 12)
  const headers = {
    'Content-Type': `multipart/form-data; boundary=${slow.boundary}`,
    'Content-Length': slow.body.length,
    Connection: 'close',
  }
  const done = await exchange([head('POST /files/upload', alice.token, headers), ...slow.pieces], 250)
  assert.match(done.answer, /^HTTP\/1\.1 200 /, done.answer)
  assert.ok(done.took > 2500, `took ${done.took} ms`)
  const stored = JSON.parse(done.answer.slice(done.answer.indexOf('\r\n\r\n') + 4)).data
  assert.equal(stored.size, 12_000)

  // the same upload, stalled half way for longer than the limit
  const stalled = await exchange([head('POST /files/upload', alice.token, headers), ...slow.pieces.slice(0, 6)])
  assert.match(stalled.answer, /^HTTP\/1\.1 408 /, stalled.answer)
  assert.match(stalled.answer, /"request_timeout","message":"The upload paused/)
  assert.match(stalled.answer, /\r\nCache-Control: no-store\r\n/)
  assert.ok(stalled.closed && stalled.took < 3500, `closed ${stalled.closed} after ${stalled.took} ms`)

  // kept alive, the connection of a slow upload serves another request after a pause past the limit
  const kept = { ...headers, Connection: 'keep-alive' }
  const again = await exchange(
    [
      head('POST /files/upload', alice.token, kept),
      ...slow.pieces,
      1500,
      'GET /health HTTP/1.1\r\nHost: tern\r\nConnection: close\r\n\r\n',
    ],
    150,
  )
  assert.equal(again.answer.match(/HTTP\/1\.1 200 /g)?.length, 2, again.answer)

  // a WebSocket is no request: it has outlived both limits
  socket.send({ type: 'ping' })
  await socket.next('pong')
  assert.equal(socket.closed, null)
})

test('an ordinary body must arrive in full within the limit: trickling it in does not reset the clock', async () => {
  const [alice] = await registerUsers(server, 1)
  const json = JSON.stringify({ title: 'slowly', description: 'x'.repeat(40) })
  const trickle = [
    head(`POST ${V2}/groups/create`, alice.token, {
      'Content-Type': 'application/json',
      'Content-Length': json.length,
      Connection: 'close',
    }),
    ...json,
  ]
  const late = await exchange(trickle, 150)
  assert.match(late.answer, /^HTTP\/1\.1 408 /, late.answer)
  assert.ok(late.closed && late.took < 3000, `closed ${late.closed} after ${late.took} ms`)
  // control: the same body at once is answered
  const prompt = await exchange([trickle[0], json])
  assert.match(prompt.answer, /^HTTP\/1\.1 200 /, prompt.answer)
})

test('headers must arrive within the limit, and a connection that sends nothing is closed', async () => {
  const partial = await exchange(['GET /health HTTP/1.1\r\nHost: tern\r\nX-Slow: 1'])
  assert.match(partial.answer, /^HTTP\/1\.1 408 /, partial.answer)
  assert.ok(partial.closed && partial.took < 3000, `closed ${partial.closed} after ${partial.took} ms`)
  const silent = await exchange([])
  assert.ok(silent.closed && silent.took < 3000, `closed ${silent.closed} after ${silent.took} ms`)
  // control: a whole request on a connection is answered
  const whole = await exchange(['GET /health HTTP/1.1\r\nHost: tern\r\nConnection: close\r\n\r\n'])
  assert.match(whole.answer, /^HTTP\/1\.1 200 /, whole.answer)
})

test('a tus PATCH may take longer than the limit while its bytes keep coming', async () => {
  const [alice] = await registerUsers(server, 1)
  const bytes = Buffer.alloc(12_000, 9)
  const created = await fetch(`${server.url}/uploads/tus`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'tus-resumable': '1.0.0', 'upload-length': String(bytes.length) },
  })
  assert.equal(created.status, 201, await created.text())
  const path = new URL(created.headers.get('location')!, server.url).pathname
  const headers = {
    'Tus-Resumable': '1.0.0',
    'Upload-Offset': 0,
    'Content-Type': 'application/offset+octet-stream',
    'Content-Length': bytes.length,
    Connection: 'close',
  }
  const pieces = Array.from({ length: 12 }, (_, i) => bytes.subarray(i * 1000, (i + 1) * 1000))
  const done = await exchange([head(`PATCH ${path}`, alice.token, headers), ...pieces], 250)
  assert.match(done.answer, /^HTTP\/1\.1 204 /, done.answer)
  assert.match(done.answer, /Upload-Offset: 12000/i)
  assert.ok(done.took > 2500, `took ${done.took} ms`)
})

test('an idle kept-alive connection stays open well past Node’s 5 s default and takes the next request (keep-alive 72 s)', async () => {
  const client = net.connect(Number(port), '127.0.0.1')
  await new Promise<void>((resolve) => client.once('connect', () => resolve()))
  let received = ''
  let closed = false
  client.on('data', (chunk) => (received += chunk))
  client.on('close', () => (closed = true))
  const ask = async () => {
    const before = received.length
    client.write(`GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n`)
    for (let i = 0; i < 100 && !/\}\}$/.test(received.slice(before)); i++) await sleep(20)
    return received.slice(before)
  }
  assert.match(await ask(), /^HTTP\/1\.1 200 /)
  assert.match(received, /keep-alive/i)
  // idle longer than Node's own keep-alive (5 s), and than the 1 s request limit of this server
  await sleep(6000)
  assert.equal(closed, false, 'the server kept the connection')
  assert.match(await ask(), /^HTTP\/1\.1 200 /, 'and answers on it')
  client.destroy()
})
