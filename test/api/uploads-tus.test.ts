/**
 * tus 1.0 at /uploads/tus: a standard client (tus-js-client) uploads, is interrupted and resumes;
 * the finished upload is a normal file; owners, caps and expiry hold.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as tus from 'tus-js-client'
import { bytesOf, sha256, storedFiles } from '../harness/files.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { waitFor } from '../harness/wait.js'

const CAP = 2 * 1024 * 1024
const server = await startTestServer({ env: { MAX_UPLOAD_BYTES: String(CAP), PREMIUM_MAX_UPLOAD_BYTES: String(4 * CAP) } })
const users = (n: number) => Promise.all(Array.from({ length: n }, () => server.registerUser()))

/** A raw tus request (the protocol header included). */
function tusRequest(
  s: TestServer,
  user: TestUser | null,
  method: string,
  url: string,
  headers: Record<string, string> = {},
  body?: Buffer,
) {
  return fetch(`${s.url}${url}`, {
    method,
    body: body && new Uint8Array(body),
    headers: { 'tus-resumable': '1.0.0', ...(user ? { authorization: `Bearer ${user.token}` } : {}), ...headers },
  })
}

const options = (user: TestUser, extra: tus.UploadOptions = {}): tus.UploadOptions => ({
  endpoint: `${server.url}/uploads/tus`,
  chunkSize: 256 * 1024,
  retryDelays: null,
  storeFingerprintForResuming: false,
  headers: { authorization: `Bearer ${user.token}` },
  metadata: { filename: 'movie.bin', filetype: 'video/mp4' },
  ...extra,
})

test("tus-js-client uploads, is interrupted, resumes from the server's offset and gets a normal file", async () => {
  const [alice] = await users(1)
  const bytes = bytesOf(1536 * 1024, 'tus resume')

  // First attempt: aborted once a third has gone out.
  const first = new tus.Upload(bytes, options(alice))
  await new Promise<void>((resolve, reject) => {
    first.options.onError = reject
    first.options.onSuccess = () => reject(new Error('the upload should have been interrupted'))
    first.options.onProgress = (sent) => {
      if (sent > bytes.length / 3) first.abort().then(resolve, reject)
    }
    first.start()
  })
  assert.match(first.url!, /\/uploads\/tus\/[0-9a-f]{32}$/)
  const head = await waitFor(
    async () => {
      const res = await tusRequest(server, alice, 'HEAD', new URL(first.url!).pathname)
      const offset = Number(res.headers.get('upload-offset'))
      return res.status === 200 && offset > 0 ? offset : undefined
    },
    { message: 'the server to hold part of the upload' },
  )
  assert.ok(head < bytes.length, `offset ${head} of ${bytes.length}`)

  // Second attempt: the same upload URL; the client asks the server where to go on.
  const patchOffsets: number[] = []
  const second = new tus.Upload(
    bytes,
    options(alice, {
      uploadUrl: first.url,
      onBeforeRequest: (req) => {
        if (req.getMethod() === 'PATCH') patchOffsets.push(Number(req.getHeader('Upload-Offset')))
      },
    }),
  )
  const response = await new Promise<tus.HttpResponse>((resolve, reject) => {
    second.options.onError = reject
    second.options.onSuccess = ({ lastResponse }) => resolve(lastResponse)
    second.start()
  })
  assert.equal(patchOffsets[0], head, 'resumed where the server was, not from 0')

  const fileId = Number(response.getHeader('Tern-File-Id'))
  const filePath = response.getHeader('Tern-File-Path')!
  assert.ok(fileId > 0)
  assert.match(filePath, /^[A-Za-z0-9_-]{22}\.bin$/)
  const byId = await fetch(`${server.url}/files/${fileId}`, { headers: { authorization: `Bearer ${alice.token}` } })
  assert.equal(byId.status, 200)
  const received = Buffer.from(await byId.arrayBuffer())
  assert.equal(sha256(received), sha256(bytes))
  assert.deepEqual(received, bytes)

  // The client can find the file later by its tus id; the tus copy is gone.
  const id = first.url!.split('/').pop()
  const found = await alice.api.get(`/uploads/tus/${id}/file`)
  assert.equal(found.status, 200, found.text)
  assert.deepEqual(
    [found.body.data.id, found.body.data.path, found.body.data.hash, found.body.data.file_name],
    [fileId, filePath, sha256(bytes), 'movie.bin'],
  )
  await waitFor(async () => (storedFiles(server, 'tus').length === 0 ? true : undefined), { message: 'the tus copy to be removed' })
  assert.equal((await tusRequest(server, alice, 'HEAD', `/uploads/tus/${id}`)).status, 404)
})

test('an image uploaded over tus gets its thumbnail like any upload', async () => {
  const [alice] = await users(1)
  const sharp = (await import('sharp')).default
  const jpeg = await sharp({ create: { width: 900, height: 700, channels: 3, background: '#229944' } })
    .jpeg()
    .toBuffer()
  const upload = new tus.Upload(jpeg, options(alice, { metadata: { filename: 'pic.jpg' } }))
  const response = await new Promise<tus.HttpResponse>((resolve, reject) => {
    upload.options.onError = reject
    upload.options.onSuccess = ({ lastResponse }) => resolve(lastResponse)
    upload.start()
  })
  const file = await alice.api.get(`/uploads/tus/${upload.url!.split('/').pop()}/file`)
  assert.equal(file.body.data.id, Number(response.getHeader('Tern-File-Id')))
  assert.deepEqual([file.body.data.mime_type, file.body.data.preview_size, file.body.data.width], ['image/jpeg', 'big', 900])
  assert.equal((await fetch(`${server.url}${file.body.data.thumbnail_url}`)).status, 200)
})

test('tus needs a login, and an upload belongs to its creator', async () => {
  const [alice, bob] = await users(2)
  const anonymous = await tusRequest(server, null, 'POST', '/uploads/tus', { 'upload-length': '10' })
  assert.equal(anonymous.status, 401)
  assert.equal((await anonymous.json()).error.code, 'unauthorized')

  const created = await tusRequest(server, alice, 'POST', '/uploads/tus', {
    'upload-length': '10',
    'upload-metadata': `filename ${Buffer.from('a.txt').toString('base64')}`,
  })
  assert.equal(created.status, 201)
  const location = created.headers.get('location')!
  assert.match(location, /^\/uploads\/tus\/[0-9a-f]{32}$/)
  const patch = { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }
  assert.equal((await tusRequest(server, bob, 'HEAD', location)).status, 404)
  assert.equal((await tusRequest(server, bob, 'PATCH', location, patch, Buffer.from('0123456789'))).status, 404)
  assert.equal((await tusRequest(server, bob, 'DELETE', location)).status, 404)
  assert.equal((await tusRequest(server, null, 'HEAD', location)).status, 401)
  assert.equal((await bob.api.get(`/uploads/tus/${location.split('/').pop()}/file`)).status, 404)

  const own = await tusRequest(server, alice, 'PATCH', location, patch, Buffer.from('0123456789'))
  assert.equal(own.status, 204)
  assert.ok(Number(own.headers.get('tern-file-id')) > 0)
  assert.equal((await alice.api.get(`/uploads/tus/${location.split('/').pop()}/file`)).body.data.mime_type, 'text/plain')
})

test("tus respects the caller's cap: declared lengths and deferred ones", async () => {
  const [alice, premium] = await users(2)
  assert.equal((await tusRequest(server, alice, 'POST', '/uploads/tus', { 'upload-length': String(CAP + 1) })).status, 413)
  assert.equal((await tusRequest(server, alice, 'POST', '/uploads/tus', { 'upload-length': String(CAP) })).status, 201)
  await server.ctx.db
    .updateTable('users')
    .set({ premium_expires_at: Date.now() + 60_000 })
    .where('id', '=', premium.id)
    .execute()
  assert.equal((await tusRequest(server, premium, 'POST', '/uploads/tus', { 'upload-length': String(CAP + 1) })).status, 201)
  assert.equal((await tusRequest(server, premium, 'POST', '/uploads/tus', { 'upload-length': String(4 * CAP + 1) })).status, 413)

  const options = await tusRequest(server, null, 'OPTIONS', '/uploads/tus')
  assert.equal(options.status, 204)
  assert.match(options.headers.get('tus-extension')!, /creation/)

  // Length unknown at first: the bytes are counted against the cap as they come.
  const deferred = await tusRequest(server, alice, 'POST', '/uploads/tus', { 'upload-defer-length': '1' })
  assert.equal(deferred.status, 201)
  const over = await tusRequest(
    server,
    alice,
    'PATCH',
    deferred.headers.get('location')!,
    {
      'content-type': 'application/offset+octet-stream',
      'upload-offset': '0',
    },
    bytesOf(CAP + 1, 'deferred'),
  )
  assert.equal(over.status, 413)
})

test('unfinished tus uploads expire and the sweep removes them', async () => {
  const short = await startTestServer({ env: { UPLOAD_SESSION_TTL_SECONDS: '1', UPLOAD_SWEEP_INTERVAL_SECONDS: '1' } })
  const alice = await short.registerUser()
  const created = await tusRequest(short, alice, 'POST', '/uploads/tus', { 'upload-length': '100' })
  assert.equal(created.status, 201)
  const location = created.headers.get('location')!
  const patch = await tusRequest(
    short,
    alice,
    'PATCH',
    location,
    { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
    Buffer.alloc(40),
  )
  assert.equal(patch.status, 204)
  assert.equal(storedFiles(short, 'tus').length, 2, 'the bytes and their info file')
  await waitFor(async () => (storedFiles(short, 'tus').length === 0 ? true : undefined), { timeoutMs: 5000, message: 'the sweep' })
  assert.equal((await tusRequest(short, alice, 'HEAD', location)).status, 404)
})

test('tus answers carry the security headers, and its errors the JSON envelope', async () => {
  const [alice, bob] = await users(2)
  const created = await tusRequest(server, alice, 'POST', '/uploads/tus', { 'upload-length': '10' })
  assert.equal(created.status, 201)
  for (const res of [created, await tusRequest(server, null, 'OPTIONS', '/uploads/tus')]) {
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
    assert.ok(res.headers.get('content-security-policy'), 'a CSP')
    assert.equal(res.headers.get('cache-control'), 'no-store')
  }
  const location = created.headers.get('location')!
  const cases: [Response, number, string][] = [
    [await tusRequest(server, bob, 'HEAD', location), 404, 'not_found'],
    [
      await tusRequest(
        server,
        bob,
        'PATCH',
        location,
        { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
        Buffer.from('0123456789'),
      ),
      404,
      'not_found',
    ],
    [
      await tusRequest(
        server,
        alice,
        'PATCH',
        location,
        { 'content-type': 'application/offset+octet-stream', 'upload-offset': '3' },
        Buffer.from('0123456'),
      ),
      409,
      'conflict',
    ],
    [await tusRequest(server, alice, 'POST', '/uploads/tus', { 'upload-length': String(CAP + 1) }), 413, 'payload_too_large'],
  ]
  for (const [res, status, code] of cases) {
    assert.equal(res.status, status)
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
    if (res.headers.get('content-length') === '0' || (await res.clone().text()) === '') continue // HEAD: no body
    assert.match(res.headers.get('content-type')!, /^application\/json/)
    const body = await res.json()
    assert.deepEqual([body.success, body.error.code, typeof body.error.message], [false, code, 'string'])
  }
  // control: the right offset still goes through
  const ok = await tusRequest(
    server,
    alice,
    'PATCH',
    location,
    { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
    Buffer.from('0123456789'),
  )
  assert.equal(ok.status, 204)
})
