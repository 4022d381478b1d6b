/**
 * Chunked, resumable uploads (docs/api.md): POST /uploads/multipart (start and
 * chunks), GET /uploads/multipart/{session_id}, POST /uploads/complete, and the expiry sweep.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { bytesOf, postMultipart, sha256, storedFiles, upload } from '../harness/files.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { sleep, waitFor } from '../harness/wait.js'

const CAP = 1024 * 1024
const server = await startTestServer({ env: { MAX_UPLOAD_BYTES: String(CAP), PREMIUM_MAX_UPLOAD_BYTES: String(8 * CAP) } })
const users = (n: number) => Promise.all(Array.from({ length: n }, () => server.registerUser()))

const start = (user: TestUser, body: Record<string, unknown>) => user.api.post('/uploads/multipart', body)
const status = (user: TestUser, sessionId: string) => user.api.get(`/uploads/multipart/${sessionId}`)
const complete = (user: TestUser, body: Record<string, unknown>) => user.api.post('/uploads/complete', body)
const chunk = (s: TestServer, user: TestUser, sessionId: string, offset: number, bytes: Buffer) =>
  postMultipart(s, user, '/uploads/multipart', { name: 'chunk', bytes }, { session_id: sessionId, offset: String(offset) })

async function startSession(user: TestUser, size: number, fileName = 'video.mp4') {
  const res = await start(user, { file_name: fileName, size, mime_type: 'video/mp4' })
  assert.equal(res.status, 200, res.text)
  return res.body.data.session_id as string
}

test('start, send chunks, ask for the offset, complete: a normal file', async () => {
  const [alice] = await users(1)
  const bytes = bytesOf(300_000, 'chunked happy path')
  const started = await start(alice, { file_name: 'clip.bin', size: bytes.length, mime_type: 'application/octet-stream' })
  assert.equal(started.status, 200, started.text)
  const { session_id: sessionId } = started.body.data
  assert.match(sessionId, /^[A-Za-z0-9_-]{22}$/)
  assert.equal(started.body.data.offset, 0)
  assert.equal(started.body.data.size, bytes.length)
  assert.ok(Date.parse(started.body.data.expires_at) > Date.now() + 86_000_000, 'expires in 24 h by default')

  let offset = 0
  for (const size of [100_000, 100_000, 100_000]) {
    const res = await chunk(server, alice, sessionId, offset, bytes.subarray(offset, offset + size))
    assert.equal(res.status, 200, JSON.stringify(res.body))
    offset += size
    assert.deepEqual([res.body.data.session_id, res.body.data.offset, res.body.data.size], [sessionId, offset, bytes.length])
    const now = await status(alice, sessionId)
    assert.equal(now.status, 200)
    assert.deepEqual([now.body.data.session_id, now.body.data.offset, now.body.data.size], [sessionId, offset, bytes.length])
  }

  const done = await complete(alice, { session_id: sessionId, hash: sha256(bytes).toUpperCase() })
  assert.equal(done.status, 200, done.text)
  const file = done.body.data
  assert.equal(file.size, bytes.length)
  assert.equal(file.hash, sha256(bytes))
  assert.equal(file.file_name, 'clip.bin')
  assert.equal(file.mime_type, 'application/octet-stream', 'the type comes from the bytes, not the declared one')
  assert.match(file.path, /^[A-Za-z0-9_-]{22}\.bin$/)
  const served = await fetch(`${server.url}${file.url}`)
  assert.deepEqual(Buffer.from(await served.arrayBuffer()), bytes)
  const byId = await alice.api.get(`/files/${file.id}`)
  assert.equal(byId.status, 200)

  // Completing again gives the same file; the session itself is gone.
  const again = await complete(alice, { session_id: sessionId })
  assert.equal(again.status, 200, again.text)
  assert.equal(again.body.data.id, file.id)
  assertError(await status(alice, sessionId), 404, 'not_found', 'finished session')
  assert.deepEqual(
    storedFiles(server, 'parts').filter((p) => p.includes(sessionId)),
    [],
  )
})

test('a wrong offset is a 409 naming the current offset; nothing is appended', async () => {
  const [alice] = await users(1)
  const bytes = bytesOf(50_000, 'offsets')
  const sessionId = await startSession(alice, bytes.length)
  assert.equal((await chunk(server, alice, sessionId, 0, bytes.subarray(0, 20_000))).status, 200)
  for (const wrong of [0, 10_000, 30_000]) {
    const res = await chunk(server, alice, sessionId, wrong, bytes.subarray(wrong, wrong + 10_000))
    assertError(res, 409, 'conflict', `offset ${wrong}`)
    assert.match(res.body.error.message, /offset 20000/)
    assert.equal(res.headers.get('upload-offset'), '20000')
  }
  assert.equal((await status(alice, sessionId)).body.data.offset, 20_000)
  const rest = await chunk(server, alice, sessionId, 20_000, bytes.subarray(20_000))
  assert.equal(rest.status, 200)
  const done = await complete(alice, { session_id: sessionId, hash: sha256(bytes) })
  assert.equal(done.status, 200, done.text)
})

test('chunks past the declared size are 413; completing early is 409; a wrong hash is 400', async () => {
  const [alice] = await users(1)
  const bytes = bytesOf(40_000, 'limits')
  const sessionId = await startSession(alice, bytes.length)
  const tooLong = await chunk(server, alice, sessionId, 0, Buffer.concat([bytes, Buffer.from('!')]))
  assertError(tooLong, 413, 'payload_too_large', 'past the size')
  assert.match(tooLong.body.error.message, /declared size of 40000 bytes/)
  // What reached the disk before the refusal counts, as for any interrupted chunk; never past the size.
  const kept = (await status(alice, sessionId)).body.data.offset
  assert.ok(kept >= 0 && kept < 40_000, `kept ${kept}`)

  const upTo = Math.max(kept, 10_000)
  assert.equal((await chunk(server, alice, sessionId, kept, bytes.subarray(kept, upTo))).status, 200)
  const early = await complete(alice, { session_id: sessionId })
  assertError(early, 409, 'conflict', 'incomplete')
  assert.match(early.body.error.message, new RegExp(`${upTo} of 40000`))

  assert.equal((await chunk(server, alice, sessionId, upTo, bytes.subarray(upTo))).status, 200)
  const wrongHash = await complete(alice, { session_id: sessionId, hash: sha256(Buffer.from('something else')) })
  assertError(wrongHash, 400, 'validation_error', 'wrong hash')
  assert.match(wrongHash.body.error.message, new RegExp(sha256(bytes)))
  assertError(await complete(alice, { session_id: sessionId, hash: 'nothex' }), 400, 'validation_error', 'malformed hash')
  assert.equal((await complete(alice, { session_id: sessionId, hash: sha256(bytes) })).status, 200)
})

test('the declared size must fit the cap (premium: the premium cap); bad start bodies are 400', async () => {
  const [alice] = await users(1)
  assertError(await start(alice, { file_name: 'big.iso', size: CAP + 1 }), 413, 'payload_too_large', 'over the cap')
  assert.equal((await start(alice, { file_name: 'ok.iso', size: CAP })).status, 200)
  await server.ctx.db
    .updateTable('users')
    .set({ premium_expires_at: Date.now() + 60_000 })
    .where('id', '=', alice.id)
    .execute()
  assert.equal((await start(alice, { file_name: 'big.iso', size: CAP + 1 })).status, 200, 'premium')
  assertError(await start(alice, { file_name: 'huge.iso', size: 8 * CAP + 1 }), 413, 'payload_too_large', 'over the premium cap')

  for (const body of [
    { size: 10 },
    { file_name: 'x' },
    { file_name: 'x', size: -1 },
    { file_name: 'x', size: '10' },
    { file_name: '', size: 1 },
    { file_name: 'x'.repeat(256), size: 1 },
  ]) {
    assertError(await start(alice, body), 400, 'validation_error', JSON.stringify(body))
  }
  const noOffset = await postMultipart(
    server,
    alice,
    '/uploads/multipart',
    { name: 'chunk', bytes: Buffer.from('x') },
    { session_id: 'abc' },
  )
  assertError(noOffset, 400, 'validation_error', 'no offset field')
  const badOffset = await postMultipart(
    server,
    alice,
    '/uploads/multipart',
    { name: 'chunk', bytes: Buffer.from('x') },
    { session_id: 'abc', offset: '-1' },
  )
  assertError(badOffset, 400, 'validation_error', 'negative offset')
})

test('only the session owner may send chunks, ask or complete; no login is 401', async () => {
  const [alice, bob] = await users(2)
  const sessionId = await startSession(alice, 10)
  assertError(await chunk(server, bob, sessionId, 0, Buffer.alloc(10)), 404, 'not_found', 'chunk')
  assertError(await status(bob, sessionId), 404, 'not_found', 'status')
  assertError(await complete(bob, { session_id: sessionId }), 404, 'not_found', 'complete')
  assertError(await status(alice, 'no-such-session'), 404, 'not_found', 'unknown session')
  assertError(await server.api.post('/uploads/multipart', { file_name: 'x', size: 1 }), 401, 'unauthorized', 'start')
  assertError(await server.api.get(`/uploads/multipart/${sessionId}`), 401, 'unauthorized', 'status')
  assertError(await server.api.post('/uploads/complete', { session_id: sessionId }), 401, 'unauthorized', 'complete')
  assertError(await chunk(server, { ...alice, token: 'bogus' }, sessionId, 0, Buffer.alloc(10)), 401, 'unauthorized', 'chunk')
  assert.equal((await status(alice, sessionId)).body.data.offset, 0)
})

/** Sends the head of a chunk request and part of the chunk, then drops the connection. */
function interruptedChunk(user: TestUser, sessionId: string, offset: number, bytes: Buffer, sendBytes: number) {
  const boundary = 'tern-interrupted'
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="session_id"\r\n\r\n${sessionId}\r\n` +
      `--${boundary}\r\ncontent-disposition: form-data; name="offset"\r\n\r\n${offset}\r\n` +
      `--${boundary}\r\ncontent-disposition: form-data; name="chunk"; filename="blob"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  )
  const { port } = new URL(server.url)
  return new Promise<void>((resolve) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: '/uploads/multipart',
      method: 'POST',
      headers: {
        authorization: `Bearer ${user.token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': head.length + bytes.length + 100,
      },
    })
    req.on('error', () => resolve())
    req.on('response', () => resolve())
    req.write(head)
    req.write(bytes.subarray(0, sendBytes), () =>
      setTimeout(() => {
        req.destroy()
        resolve()
      }, 300),
    )
  })
}

test("an interrupted chunk keeps what arrived; the client resumes from the server's offset", async () => {
  const [alice] = await users(1)
  const bytes = bytesOf(600_000, 'interrupted')
  const sessionId = await startSession(alice, bytes.length, 'resumed.bin')
  assert.equal((await chunk(server, alice, sessionId, 0, bytes.subarray(0, 100_000))).status, 200)
  // The second chunk (400 KB) is cut after 250 KB.
  await interruptedChunk(alice, sessionId, 100_000, bytes.subarray(100_000, 500_000), 250_000)

  // Once the server has seen the connection drop, the session holds between the first chunk and
  // what was sent; the client asks and resumes there.
  const offset = await waitFor(
    async () => {
      const res = await status(alice, sessionId)
      // a chunk at an offset no session has: 409 with the offset, or "in progress" while the cut one is still open
      const probe = await chunk(server, alice, sessionId, 2 ** 40, Buffer.alloc(1))
      return probe.status === 409 && !/in progress/.test(probe.body.error.message) ? (res.body.data.offset as number) : undefined
    },
    { timeoutMs: 5000, message: 'the interrupted chunk to be settled' },
  )
  assert.ok(offset > 100_000 && offset <= 350_000, `offset ${offset}`)
  assert.equal((await status(alice, sessionId)).body.data.offset, offset)

  const rest = await chunk(server, alice, sessionId, offset, bytes.subarray(offset))
  assert.equal(rest.status, 200, JSON.stringify(rest.body))
  assert.equal(rest.body.data.offset, bytes.length)
  const done = await complete(alice, { session_id: sessionId, hash: sha256(bytes) })
  assert.equal(done.status, 200, done.text)
  assert.equal(done.body.data.hash, sha256(bytes))
  assert.deepEqual(Buffer.from(await (await fetch(`${server.url}${done.body.data.url}`)).arrayBuffer()), bytes)
})

test('an empty file completes without any chunk', async () => {
  const [alice] = await users(1)
  const sessionId = await startSession(alice, 0, 'empty.txt')
  const done = await complete(alice, { session_id: sessionId, hash: sha256(Buffer.alloc(0)) })
  assert.equal(done.status, 200, done.text)
  assert.deepEqual([done.body.data.size, done.body.data.file_name], [0, 'empty.txt'])
})

test('identical bytes uploaded in chunks share the stored object of a plain upload', async () => {
  const [alice, bob] = await users(2)
  const bytes = bytesOf(70_000, 'chunked dedupe')
  const plain = await upload(server, alice, bytes, 'plain.bin')
  const objects = storedFiles(server, 'objects').length
  const sessionId = await startSession(bob, bytes.length, 'chunked.bin')
  assert.equal((await chunk(server, bob, sessionId, 0, bytes)).status, 200)
  const done = await complete(bob, { session_id: sessionId })
  assert.equal(done.status, 200, done.text)
  assert.equal(done.body.data.hash, plain.hash)
  assert.notEqual(done.body.data.path, plain.path)
  assert.equal(storedFiles(server, 'objects').length, objects)
  assert.equal(storedFiles(server, 'parts').filter((p) => p.includes(sessionId)).length, 0)
})

test('abandoned sessions expire and the sweep removes their bytes', async () => {
  const short = await startTestServer({ env: { UPLOAD_SESSION_TTL_SECONDS: '1', UPLOAD_SWEEP_INTERVAL_SECONDS: '1' } })
  const alice = await short.registerUser()
  const res = await alice.api.post('/uploads/multipart', { file_name: 'left.bin', size: 10_000 })
  const sessionId = res.body.data.session_id
  assert.equal((await chunk(short, alice, sessionId, 0, bytesOf(4000, 'abandoned'))).status, 200)
  assert.deepEqual(storedFiles(short, 'parts'), [sessionId])

  // A session that keeps receiving chunks stays alive past the lifetime of an idle one.
  const active = (await alice.api.post('/uploads/multipart', { file_name: 'busy.bin', size: 10_000 })).body.data.session_id
  for (let i = 0; i < 5; i++) {
    assert.equal((await chunk(short, alice, active, i * 100, bytesOf(100, `active ${i}`))).status, 200)
    await sleep(400)
  }
  await waitFor(async () => (storedFiles(short, 'parts').includes(sessionId) ? undefined : true), { timeoutMs: 5000, message: 'the sweep' })
  const gone = await alice.api.get(`/uploads/multipart/${sessionId}`)
  assertError(gone, 404, 'not_found', 'expired session')
  const rows = await short.ctx.db.selectFrom('upload_sessions').select('id').where('id', '=', sessionId).execute()
  assert.deepEqual(rows, [])
  assert.equal((await alice.api.get(`/uploads/multipart/${active}`)).status, 200, 'the active session is still there')
})
