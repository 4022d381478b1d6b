/**
 * Files (docs/api.md): POST /files/upload, GET /files/{id}, GET /uploads/{path}:
 * type detection, dedupe, thumbnails, caps stopped mid-stream, Range/ETag, safe serving, traversal.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { test } from 'node:test'
import sharp from 'sharp'
import { requireUploaded } from '../../src/modules/files/service.js'
import { assertError } from '../harness/assert.js'
import { bytesOf, postMultipart, rawRequest, sha256, storedFiles, upload } from '../harness/files.js'
import { send, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'

const CAP = 512 * 1024
const PREMIUM_CAP = 4 * 1024 * 1024
const server = await startTestServer({ env: { MAX_UPLOAD_BYTES: String(CAP), PREMIUM_MAX_UPLOAD_BYTES: String(PREMIUM_CAP) } })
const users = (n: number) => Promise.all(Array.from({ length: n }, () => server.registerUser()))
const get = (user: TestUser | null, url: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${url}`, { headers: { ...headers, ...(user ? { authorization: `Bearer ${user.token}` } : {}) } })

/** Premium until `until` (epoch ms): there is no premium module yet, so the harness writes the column. */
const makePremium = (user: TestUser, until: number) =>
  server.ctx.db.updateTable('users').set({ premium_expires_at: until }).where('id', '=', user.id).execute()

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 90 } } })
    .png()
    .toBuffer()

// ---------------------------------------------------------------- upload

test('an upload returns the file: server-made path, SHA-256, the type detected from the bytes', async () => {
  const [alice] = await users(1)
  const bytes = await png(40, 30)
  // The name and the declared type lie; the bytes are a PNG.
  const file = await upload(server, alice, bytes, 'holiday notes.txt', 'text/plain')
  assert.deepEqual(Object.keys(file).sort(), [
    'created_at',
    'file_name',
    'file_type',
    'hash',
    'height',
    'id',
    'mime_type',
    'path',
    'preview_size',
    'size',
    'thumbnail_path',
    'thumbnail_url',
    'url',
    'width',
  ])
  assert.equal(typeof file.id, 'number')
  assert.match(file.path, /^[A-Za-z0-9_-]{22}\.png$/)
  assert.equal(file.url, `/uploads/${file.path}`)
  assert.equal(file.size, bytes.length)
  assert.equal(file.hash, sha256(bytes))
  assert.equal(file.mime_type, 'image/png')
  assert.equal(file.file_type, 'image')
  assert.equal(file.file_name, 'holiday notes.txt')
  assert.ok(!file.path.includes('holiday'), 'the client name never becomes the path')

  const served = await get(null, file.url)
  assert.equal(served.status, 200)
  assert.equal(served.headers.get('content-type'), 'image/png')
  assert.deepEqual(Buffer.from(await served.arrayBuffer()), bytes)
  const byId = await get(alice, `/files/${file.id}`)
  assert.equal(byId.status, 200)
  assert.deepEqual(Buffer.from(await byId.arrayBuffer()), bytes)
})

test('text and unknown bytes get text/plain and application/octet-stream; file names are cleaned', async () => {
  const [alice] = await users(1)
  const text = await upload(server, alice, Buffer.from('plain words, nothing else\n'), '../../etc/passwd')
  assert.equal(text.mime_type, 'text/plain')
  assert.match(text.path, /\.txt$/)
  assert.equal(text.file_name, 'passwd')
  const binary = await upload(server, alice, Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]), 'data')
  assert.equal(binary.mime_type, 'application/octet-stream')
  assert.equal(binary.file_type, 'document')
  assert.equal(binary.preview_size, 'none')
  const empty = await upload(server, alice, Buffer.alloc(0), 'empty')
  assert.equal(empty.size, 0)
  assert.equal((await get(null, empty.url)).status, 200)
})

test('upload needs a login, multipart and a "file" part', async () => {
  const [alice] = await users(1)
  const anonymous = await postMultipart(server, null, '/files/upload', { name: 'file', bytes: Buffer.from('x') })
  assertError(anonymous, 401, 'unauthorized', 'no token')
  const wrongPart = await postMultipart(server, alice, '/files/upload', { name: 'document', bytes: Buffer.from('x') })
  assertError(wrongPart, 400, 'validation_error', 'part not named file')
  const json = await alice.api.post('/files/upload', { file: 'x' })
  assertError(json, 415, 'unsupported_media_type', 'JSON body: not the multipart the route takes')
  assert.equal((await get(null, '/files/1')).status, 401)
})

test('identical bytes are stored once; each upload is its own, owned by its uploader', async () => {
  const [alice, bob] = await users(2)
  const bytes = bytesOf(100_000, 'dedupe')
  const objectsBefore = storedFiles(server, 'objects').length
  const a = await upload(server, alice, bytes, 'a.bin')
  const b = await upload(server, bob, bytes, 'b.bin')
  const a2 = await upload(server, alice, bytes, 'again.bin')
  assert.equal(storedFiles(server, 'objects').length, objectsBefore + 1, 'one stored object for three uploads')
  assert.equal(new Set([a.id, b.id, a2.id]).size, 3)
  assert.equal(new Set([a.path, b.path, a2.path]).size, 3, 'each upload has its own path')
  assert.deepEqual([a.hash, b.hash, a2.hash], [sha256(bytes), sha256(bytes), sha256(bytes)])
  assert.deepEqual([a.file_name, b.file_name, a2.file_name], ['a.bin', 'b.bin', 'again.bin'])
  for (const f of [a, b, a2]) assert.deepEqual(Buffer.from(await (await get(null, f.url)).arrayBuffer()), bytes)
  // Bob's upload is Bob's: he may read it by id, Alice may not (and vice versa).
  assert.equal((await get(bob, `/files/${b.id}`)).status, 200)
  assert.equal((await get(alice, `/files/${b.id}`)).status, 404)
  assert.equal((await get(bob, `/files/${a.id}`)).status, 404)
  assert.equal(storedFiles(server, 'tmp').length, 0, 'no temporary file is left')
})

// ---------------------------------------------------------------- caps

/**
 * Streams a multipart upload of `total` bytes slowly (16 KiB every 10 ms) with node:http and
 * records how much had been written when the response arrived.
 */
function slowUpload(user: TestUser, total: number) {
  const boundary = 'tern-test-boundary'
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const { port } = new URL(server.url)
  return new Promise<{ status: number; body: any; sentWhenAnswered: number; total: number }>((resolve, reject) => {
    let sent = 0
    let timer: NodeJS.Timeout
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/files/upload',
        method: 'POST',
        headers: {
          authorization: `Bearer ${user.token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + total + tail.length,
        },
      },
      (res) => {
        const sentWhenAnswered = sent
        clearInterval(timer)
        const chunks: Buffer[] = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => {
          req.destroy()
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()), sentWhenAnswered, total })
        })
      },
    )
    req.on('error', reject)
    req.write(head)
    const piece = bytesOf(16 * 1024, 'slow')
    timer = setInterval(() => {
      if (sent >= total) {
        clearInterval(timer)
        return void req.end(tail)
      }
      req.write(piece)
      sent += piece.length
    }, 10)
  })
}

test('an upload over the cap is refused with 413 while it streams, and nothing stays on disk', async () => {
  const [alice] = await users(1)
  const before = storedFiles(server)
  const total = 8 * CAP
  const res = await slowUpload(alice, total)
  assertError(res, 413, 'payload_too_large', 'over the cap')
  assert.match(res.body.error.message, new RegExp(`${CAP} bytes`))
  assert.ok(res.sentWhenAnswered < total / 2, `answered after ${res.sentWhenAnswered} of ${total} bytes`)
  assert.ok(res.sentWhenAnswered >= CAP, 'not before the cap was reached')
  assert.deepEqual(storedFiles(server), before, 'no partial data is left')
  const rows = await server.ctx.db.selectFrom('file_uploads').select('id').where('owner_id', '=', alice.id).execute()
  assert.deepEqual(rows, [])
})

test('a client that keeps sending after the 413 still reads it: the server closes gently, without a reset', async () => {
  const [alice] = await users(1)
  const boundary = 'tern-linger'
  const head = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`
  const total = 8 * CAP
  // A raw socket that, like a simple client, writes its whole body before it looks at the answer;
  // half-open, so that the server's FIN does not stop it writing.
  const socket = net.connect({ port: Number(new URL(server.url).port), host: '127.0.0.1', allowHalfOpen: true })
  await new Promise((resolve) => socket.once('connect', resolve))
  const chunks: Buffer[] = []
  let error: Error | null = null
  socket.on('data', (chunk) => chunks.push(chunk))
  socket.on('error', (e) => (error = e))
  let serverEnded = false
  socket.once('end', () => (serverEnded = true))
  const closed = new Promise((resolve) => socket.once('close', resolve))
  socket.write(
    `POST /files/upload HTTP/1.1\r\nhost: tern\r\nauthorization: Bearer ${alice.token}\r\n` +
      `content-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${head.length + total + boundary.length + 8}\r\n\r\n${head}`,
  )
  const piece = bytesOf(64 * 1024, 'linger')
  // paced, so that most of the body is still to come when the answer is written
  for (let sent = 0; sent < total && !error; sent += piece.length) {
    socket.write(piece)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  if (!error) socket.end(`\r\n--${boundary}--\r\n`)
  await closed
  assert.equal(error, null, 'no EPIPE or ECONNRESET while the client finished its body')
  assert.ok(serverEnded, 'the server closed its side with a FIN')
  const answer = Buffer.concat(chunks).toString()
  assert.match(answer, /^HTTP\/1\.1 413 /)
  assert.match(answer, /\r\nconnection: close\r\n/i)
  assert.equal(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code, 'payload_too_large')
})

test('exactly the cap is accepted; premium users get the premium cap while premium lasts', async () => {
  const [alice, bob] = await users(2)
  assert.equal((await upload(server, alice, bytesOf(CAP, 'at cap'))).size, CAP)
  const over = bytesOf(CAP + 1, 'over cap')
  const refused = await postMultipart(server, bob, '/files/upload', { name: 'file', bytes: over })
  assertError(refused, 413, 'payload_too_large', 'one byte over')

  await makePremium(bob, Date.now() + 86_400_000)
  assert.equal((await upload(server, bob, over)).size, CAP + 1)
  const overPremium = await postMultipart(server, bob, '/files/upload', { name: 'file', bytes: bytesOf(PREMIUM_CAP + 1, 'over premium') })
  assertError(overPremium, 413, 'payload_too_large', 'over the premium cap')

  await makePremium(bob, Date.now() - 1000)
  const expired = await postMultipart(server, bob, '/files/upload', { name: 'file', bytes: over })
  assertError(expired, 413, 'payload_too_large', 'premium expired')
})

// ---------------------------------------------------------------- thumbnails

test('a photo gets a WebP thumbnail, its size and a big preview', async () => {
  const [alice] = await users(1)
  const jpeg = await sharp({ create: { width: 1600, height: 900, channels: 3, background: '#3366aa' } })
    .jpeg()
    .toBuffer()
  const file = await upload(server, alice, jpeg, 'photo.jpg')
  assert.equal(file.mime_type, 'image/jpeg')
  assert.deepEqual([file.width, file.height, file.preview_size], [1600, 900, 'big'])
  assert.match(file.thumbnail_path, /^[A-Za-z0-9_-]{22}\.thumb\.webp$/)
  assert.equal(file.thumbnail_url, `/uploads/${file.thumbnail_path}`)
  const thumb = await get(null, file.thumbnail_url)
  assert.equal(thumb.status, 200)
  assert.equal(thumb.headers.get('content-type'), 'image/webp')
  const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata()
  assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 320, 180])
})

test('preview sizes: small pictures and panoramas are medium, EXIF rotation is applied, broken images get none', async () => {
  const [alice] = await users(1)
  const small = await upload(server, alice, await png(200, 150), 'icon.png')
  assert.deepEqual([small.width, small.height, small.preview_size], [200, 150, 'medium'])
  const smallThumb = await sharp(Buffer.from(await (await get(null, small.thumbnail_url)).arrayBuffer())).metadata()
  assert.deepEqual([smallThumb.width, smallThumb.height], [200, 150], 'never enlarged')

  const panorama = await upload(server, alice, await png(2400, 400), 'pano.png')
  assert.deepEqual([panorama.width, panorama.height, panorama.preview_size], [2400, 400, 'medium'])

  // Stored 1200×800 with "rotate 90°" in EXIF: shown (and measured) as 800×1200.
  const rotated = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#aa3366' } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .toBuffer()
  const portrait = await upload(server, alice, rotated, 'portrait.jpg')
  assert.deepEqual([portrait.width, portrait.height, portrait.preview_size], [800, 1200, 'big'])
  const portraitThumb = await sharp(Buffer.from(await (await get(null, portrait.thumbnail_url)).arrayBuffer())).metadata()
  assert.deepEqual([portraitThumb.width, portraitThumb.height], [213, 320])

  const broken = Buffer.concat([rotated.subarray(0, 20), bytesOf(500, 'garbage')])
  const file = await upload(server, alice, broken, 'broken.jpg')
  assert.equal(file.mime_type, 'image/jpeg')
  assert.deepEqual([file.thumbnail_path, file.preview_size, file.width], [null, 'none', null])
})

// ---------------------------------------------------------------- access to /files/{id}

test('GET /files/{id}: the uploader and members of a chat where it was sent; 404 for anyone else', async () => {
  const [alice, bob, eve] = await users(3)
  const bytes = bytesOf(5000, 'shared')
  const file = await upload(server, alice, bytes, 'report.bin')
  assert.equal((await get(bob, `/files/${file.id}`)).status, 404, 'not sent yet')
  const message = await send(alice, bob, 'the report', { file_path: file.path })

  const asBob = await get(bob, `/files/${file.id}`)
  assert.equal(asBob.status, 200)
  assert.deepEqual(Buffer.from(await asBob.arrayBuffer()), bytes)
  const asEve = await get(eve, `/files/${file.id}`)
  assert.equal(asEve.status, 404)
  assertError({ status: asEve.status, headers: asEve.headers, body: await asEve.json() }, 404, 'not_found', 'not a member')
  assert.equal((await get(eve, '/files/999999999')).status, 404)
  assert.equal((await get(eve, '/files/abc')).status, 400)

  // A message deleted for everyone no longer shares it.
  const del = await alice.api.delete(`${V2}/messages/${message.message_id}`, { query: { for_all: 'true' } })
  assert.equal(del.status, 200, del.text)
  assert.equal((await get(bob, `/files/${file.id}`)).status, 404)
  assert.equal((await get(alice, `/files/${file.id}`)).status, 200, 'the uploader still may')
})

test("requireUploaded: the uploader's own path gives the attachment; any other path is invalid_file", async () => {
  const [alice, bob] = await users(2)
  const file = await upload(server, alice, await png(700, 500), 'pic.png')
  assert.deepEqual(await requireUploaded(server.ctx, alice.id, file.path), {
    file_path: file.path,
    file_type: 'image',
    file_name: 'pic.png',
    file_size: file.size,
    thumbnail_path: file.thumbnail_path,
    preview_size: 'big',
    mime_type: 'image/png',
  })
  for (const [userId, p] of [
    [bob.id, file.path],
    [alice.id, 'never-uploaded.png'],
    [alice.id, file.thumbnail_path],
  ] as const) {
    await assert.rejects(requireUploaded(server.ctx, userId, p), (e: any) => e.code === 'invalid_file' && e.statusCode === 400)
  }
})

// ---------------------------------------------------------------- serving

test('ETag and If-None-Match answer 304; Cache-Control differs by route', async () => {
  const [alice] = await users(1)
  const bytes = bytesOf(3000, 'etag')
  const file = await upload(server, alice, bytes)
  const first = await get(null, file.url)
  const etag = first.headers.get('etag')
  assert.equal(etag, `"${file.hash}"`)
  assert.equal(first.headers.get('content-length'), '3000')
  assert.equal(first.headers.get('accept-ranges'), 'bytes')
  assert.equal(first.headers.get('cache-control'), 'private, max-age=31536000, immutable')
  const again = await get(null, file.url, { 'if-none-match': etag! })
  assert.equal(again.status, 304)
  assert.equal(await again.text(), '')
  assert.equal(again.headers.get('etag'), etag)
  assert.equal((await get(null, file.url, { 'if-none-match': `"other", ${etag}` })).status, 304, 'a list of tags')
  assert.equal((await get(null, file.url, { 'if-none-match': '"other"' })).status, 200)
  const byId = await get(alice, `/files/${file.id}`, { 'if-none-match': etag! })
  assert.equal(byId.status, 304)
  assert.equal(byId.headers.get('cache-control'), 'private, no-cache')
})

test('Range requests: 206 with Content-Range, suffix and open ranges, 416 when unsatisfiable', async () => {
  const [alice] = await users(1)
  const bytes = bytesOf(10_000, 'range')
  const file = await upload(server, alice, bytes)
  const cases: [string, number, number][] = [
    ['bytes=100-199', 100, 199],
    ['bytes=9990-', 9990, 9999],
    ['bytes=-10', 9990, 9999],
    ['bytes=9000-20000', 9000, 9999],
  ]
  for (const [range, start, end] of cases) {
    const res = await get(null, file.url, { range })
    assert.equal(res.status, 206, range)
    assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/10000`, range)
    assert.equal(res.headers.get('content-length'), String(end - start + 1), range)
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes.subarray(start, end + 1), range)
  }
  const byId = await get(alice, `/files/${file.id}`, { range: 'bytes=0-0' })
  assert.equal(byId.status, 206)
  assert.deepEqual(Buffer.from(await byId.arrayBuffer()), bytes.subarray(0, 1))

  const unsatisfiable = await get(null, file.url, { range: 'bytes=10000-' })
  assert.equal(unsatisfiable.status, 416)
  assert.equal(unsatisfiable.headers.get('content-range'), 'bytes */10000')
  assert.equal((await unsatisfiable.json()).success, false)
  // Several ranges, nonsense, or a stale If-Range: the whole file.
  for (const headers of [{ range: 'bytes=0-1,5-6' }, { range: 'pages=1-2' }, { range: 'bytes=0-9', 'if-range': '"stale"' }] as Record<
    string,
    string
  >[]) {
    const res = await get(null, file.url, headers)
    assert.equal(res.status, 200, JSON.stringify(headers))
    assert.equal((await res.arrayBuffer()).byteLength, 10_000)
  }
  const fresh = await get(null, file.url, { range: 'bytes=0-9', 'if-range': `"${file.hash}"` })
  assert.equal(fresh.status, 206)
})

test('HEAD gives the headers without the body', async () => {
  const [alice] = await users(1)
  const file = await upload(server, alice, bytesOf(1234, 'head'))
  const res = await rawRequest(server, file.url, { method: 'HEAD' })
  assert.equal(res.status, 200)
  assert.equal(res.headers['content-length'], '1234')
  assert.equal(res.body.length, 0)
})

test('HTML, SVG and XML are never served inline; every upload gets nosniff and a sandboxing CSP', async () => {
  const [alice] = await users(1)
  const active: [string, string, string][] = [
    ['<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>', 'text/html', 'cute-cat.png'],
    ['<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><circle r="5"/></svg>', 'image/svg+xml', 'icon.svg'],
    ['<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'image/svg+xml', 'x.svg'],
    ['<?xml version="1.0"?><note><to>you</to></note>', 'application/xml', 'note.xml'],
    ['\uFEFF  <html><head><meta http-equiv="refresh" content="0;url=https://evil.example"></head></html>', 'text/html', 'page.txt'],
  ]
  for (const [content, mime, name] of active) {
    const file = await upload(server, alice, Buffer.from(content), name, 'image/png')
    assert.equal(file.mime_type, mime, name)
    assert.equal(file.file_type, 'document', name)
    for (const res of [await get(null, file.url), await get(alice, `/files/${file.id}`)]) {
      assert.equal(res.status, 200, name)
      assert.match(res.headers.get('content-disposition')!, /^attachment; filename=/, name)
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', name)
      assert.equal(res.headers.get('content-security-policy'), "default-src 'none'; sandbox", name)
    }
  }
  const image = await upload(server, alice, await png(10, 10), 'ok.png')
  const res = await get(null, image.url)
  assert.match(res.headers.get('content-disposition')!, /^inline; filename="ok.png"/)
  assert.equal(res.headers.get('content-security-policy'), "default-src 'none'; sandbox")
  const unicode = await upload(server, alice, Buffer.from('x'), 'отчёт (final).txt')
  assert.equal(
    (await get(null, unicode.url)).headers.get('content-disposition'),
    `inline; filename="_____ (final).txt"; filename*=UTF-8''${encodeURIComponent('отчёт ')}%28final%29.txt`,
  )
})

// ---------------------------------------------------------------- traversal

test('no request reads outside the uploads directory (each attempt on its own)', async (t) => {
  const [alice] = await users(1)
  const file = await upload(server, alice, bytesOf(700, 'traversal'), 'ok.bin')
  const storageKey = `objects/${file.hash.slice(0, 2)}/${file.hash}`
  const attempts = [
    '/uploads/../package.json',
    '/uploads/../../../../etc/passwd',
    '/uploads/..%2f..%2f..%2f..%2fetc%2fpasswd',
    '/uploads/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
    '/uploads/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    '/uploads/%252e%252e%252fetc%252fpasswd',
    '/uploads/..%5c..%5c..%5cetc%5cpasswd',
    '/uploads//etc/passwd',
    '/uploads/%2fetc%2fpasswd',
    '/uploads/C:%5cWindows%5cwin.ini',
    `/uploads/${file.path}%00.png`,
    `/uploads/${file.path}%00`,
    '/uploads/%00',
    `/uploads/${storageKey}`,
    `/uploads/./${file.path}`,
    `/uploads/x/../${file.path.replace(/^./, 'Z')}`,
    `/uploads/${path.join(server.dataDir, 'tern.db')}`,
    '/uploads/tern.db',
    '/uploads/',
  ]
  for (const attempt of attempts) {
    await t.test(attempt, async () => {
      const res = await rawRequest(server, attempt)
      assert.ok(res.status === 400 || res.status === 404, `${attempt} → ${res.status}`)
      const body = JSON.parse(res.body.toString())
      assert.equal(body.success, false)
      assert.ok(!res.body.includes('root:'), 'no /etc/passwd content')
    })
  }
})

test('a symlink planted in the uploads directory is not followed', async () => {
  const [alice] = await users(1)
  const secret = path.join(server.dataDir, 'secret.txt')
  fs.writeFileSync(secret, 'TOP SECRET')
  const outside = fs.mkdtempSync(path.join(server.dataDir, 'outside-'))

  // The stored object itself replaced by a link to a file outside.
  const file = await upload(server, alice, bytesOf(800, 'symlink file'), 'a.bin')
  const object = path.join(server.dataDir, 'uploads', 'objects', file.hash.slice(0, 2), file.hash)
  fs.rmSync(object)
  fs.symlinkSync(secret, object)
  for (const res of [
    await rawRequest(server, file.url),
    await rawRequest(server, `/files/${file.id}`, { headers: { authorization: `Bearer ${alice.token}` } }),
  ]) {
    assert.equal(res.status, 404)
    assert.ok(!res.body.includes('TOP SECRET'))
  }

  // The object's directory replaced by a link to a directory outside holding a file of that name.
  const other = await upload(server, alice, bytesOf(900, 'symlink dir'), 'b.bin')
  const shardDir = path.join(server.dataDir, 'uploads', 'objects', other.hash.slice(0, 2))
  fs.writeFileSync(path.join(outside, other.hash), 'TOP SECRET')
  fs.rmSync(shardDir, { recursive: true })
  fs.symlinkSync(outside, shardDir)
  const res = await rawRequest(server, other.url)
  assert.equal(res.status, 404)
  assert.ok(!res.body.includes('TOP SECRET'))
})
