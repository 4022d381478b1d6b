/**
 * The HTTP contract (docs/api.md): the error envelope everywhere, body parsing and validation,
 * security headers, CORS, OpenAPI, rate limits and credential-free request logs.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import test, { after } from 'node:test'
import { createGroup } from '../harness/fixtures.js'
import { assertError, assertNoLeak } from '../harness/assert.js'
import { Client, type Response } from '../harness/client.js'
import { createTestDatabase, tempDir, testRedisUrl } from '../harness/database.js'
import { startTestServer, uniqueName } from '../harness/server.js'

const server = await startTestServer()
const V2 = '/api.v2/api'
const root = path.resolve(import.meta.dirname, '../..')

// ---------------------------------------------------------------------------------------------
// Unknown paths

for (const [method, url] of [
  ['GET', `${V2}/nope`],
  ['POST', '/api/admin/zzz'],
  ['GET', '/api.v3/api/x/y'],
  ['DELETE', `${V2}/auth/nope/123`],
  ['GET', '/no/such/page.html'],
] as const) {
  test(`unknown path ${method} ${url} is a 404 JSON envelope, never HTML`, async () => {
    const res = await server.api.request(method, url, method === 'POST' ? { a: 1 } : undefined, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*' },
    })
    assertError(res, 404, 'not_found')
    assert.match(res.body.error.message, new RegExp(url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
  })
}

test('a known path with the wrong method is a 405 envelope naming the allowed methods', async () => {
  const res = await server.api.request('PUT', `${V2}/auth/register`, { username: 'abc', password: 'long enough' })
  assertError(res, 405, 'method_not_allowed')
  assert.equal(res.headers.get('allow'), 'POST')
})

test('the 404 message does not echo the query string (it may carry a token)', async () => {
  const res = await server.api.get(`${V2}/nope`, { query: { token: 'secret-query-token' } })
  assertError(res, 404, 'not_found')
  assert.ok(!res.text.includes('secret-query-token'))
})

test(`a malformed percent-encoding in the path is a 400 envelope, not Fastify’s own error shape`, async () => {
  for (const url of [`${V2}/sessions/%E0%A4%A`, `${V2}/auth/%zz`]) {
    const res = await server.api.get(url)
    assertError(res, 400, 'validation_error')
  }
})

test(`oversized request headers are answered with the envelope (431), not Fastify’s own error shape`, async () => {
  const res = await server.api.get(`${V2}/auth/me`, { headers: { 'x-padding': 'a'.repeat(32 * 1024) } })
  assert.equal(res.status, 431)
  assert.equal(res.headers.get('cache-control'), 'no-store')
  assert.equal(res.body.success, false, res.text)
  assert.equal(typeof res.body.error?.code, 'string', res.text)
  assertNoLeak(res.text)
})

// ---------------------------------------------------------------------------------------------
// Body parsing

test('a malformed JSON body is a 400 validation_error envelope', async () => {
  const res = await server.api.post(`${V2}/auth/register`, undefined, {
    raw: '{"username": "x",',
    headers: { 'content-type': 'application/json' },
  })
  assertError(res, 400, 'validation_error')
  assert.match(res.body.error.message, /JSON/i)
})

test('malformed JSON variants (trailing garbage, single quotes, bare word) are 400 envelopes', async () => {
  for (const raw of ['{"login":"a","password":"b"} trailing', "{'login': 'a'}", 'undefined', '{"a":1,,}']) {
    const res = await server.api.post(`${V2}/auth/login`, undefined, { raw, headers: { 'content-type': 'application/json' } })
    assertError(res, 400, 'validation_error')
  }
})

test('an empty body with a JSON content type is a 400 envelope', async () => {
  const res = await server.api.post(`${V2}/auth/register`, undefined, {
    raw: '',
    headers: { 'content-type': 'application/json' },
  })
  assertError(res, 400, 'validation_error')
})

test('JSON that is not an object (null, array, string) is a 400 envelope', async () => {
  for (const raw of ['null', '[]', '"hello"', '42']) {
    const res = await server.api.post(`${V2}/auth/register`, undefined, { raw, headers: { 'content-type': 'application/json' } })
    assertError(res, 400, 'validation_error')
  }
})

test('a wrong content type on a JSON route is a 4xx JSON envelope, not HTML and not 500', async () => {
  for (const contentType of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    const res = await server.api.post(`${V2}/auth/register`, undefined, {
      raw: 'username=abcdef&password=long+enough',
      headers: { 'content-type': contentType },
    })
    assert.ok(res.status >= 400 && res.status < 500, `${contentType}: ${res.status} ${res.text}`)
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, contentType)
    assert.equal(res.body.success, false, contentType)
    assert.equal(typeof res.body.error.code, 'string', contentType)
    assert.notEqual(res.body.error.code, 'internal_error', contentType)
    assertNoLeak(res.text)
  }
})

test('a body over 1 MiB is a 413 payload_too_large envelope', async () => {
  const big = JSON.stringify({ username: uniqueName(), password: 'long enough', display_name: 'x'.repeat(1024 * 1024 + 16) })
  const res = await server.api.post(`${V2}/auth/register`, undefined, { raw: big, headers: { 'content-type': 'application/json' } })
  assertError(res, 413, 'payload_too_large')
})

test('a body just under 1 MiB is parsed (and then fails validation on its size, not on the limit)', async () => {
  const raw = JSON.stringify({ username: uniqueName(), password: 'long enough', display_name: 'x'.repeat(1000 * 1000) })
  assert.ok(Buffer.byteLength(raw) < 1024 * 1024)
  const res = await server.api.post(`${V2}/auth/register`, undefined, { raw, headers: { 'content-type': 'application/json' } })
  assertError(res, 400, 'validation_error')
  assert.match(res.body.error.message, /display_name/)
})

// ---------------------------------------------------------------------------------------------
// Validation

test('a missing field is named in the message', async () => {
  const res = await server.api.post(`${V2}/auth/register`, { username: uniqueName() })
  assertError(res, 400, 'validation_error')
  assert.match(res.body.error.message, /password/)
  const login = await server.api.post(`${V2}/auth/login`, { password: 'whatever1' })
  assertError(login, 400, 'validation_error')
  assert.match(login.body.error.message, /login/)
})

test('a field of the wrong type is named in the message (no silent coercion of bodies)', async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ login: 12345, password: 'whatever1' }, /login/],
    [{ login: 'someone', password: true }, /password/],
    [{ login: 'someone', password: 'whatever1', device: 42 }, /device/],
    [{ login: ['a'], password: 'whatever1' }, /login/],
  ]
  for (const [body, field] of cases) {
    const res = await server.api.post(`${V2}/auth/login`, body)
    assertError(res, 400, 'validation_error')
    assert.match(res.body.error.message, field, JSON.stringify(body))
  }
  const display = await server.api.post(`${V2}/auth/register`, { username: uniqueName(), password: 'long enough', display_name: 7 })
  assertError(display, 400, 'validation_error')
  assert.match(display.body.error.message, /display_name/)
})

test('query strings are coerced and validated, naming the parameter', async () => {
  const admin = await server.createAdmin()
  const good = await admin.api.get('/api/admin/users', { query: { page: '1', per_page: '5' } })
  assert.equal(good.status, 200)
  assert.equal(good.body.per_page, 5)
  const bad = await admin.api.get('/api/admin/users', { query: { per_page: 'lots' } })
  assertError(bad, 400, 'validation_error')
  assert.match(bad.body.error.message, /per_page/)
  const tooBig = await admin.api.get('/api/admin/users', { query: { per_page: 1000 } })
  assertError(tooBig, 400, 'validation_error')
  assert.match(tooBig.body.error.message, /per_page/)
})

test('a timestamp joins date and time with T: the space form, which the services would read as another year, is refused', async () => {
  const owner = await server.registerUser()
  const group = await createGroup(owner, { title: 'Dates' })
  for (const expires_at of ['0050-06-01 00:00:00Z', '2099-06-01 00:00:00Z']) {
    const res = await owner.api.post(`${V2}/groups/invite-link/create`, { chat_id: group.group_id, expires_at })
    assertError(res, 400, 'validation_error')
    assert.match(res.body.error.message, /expires_at/)
  }
  // control: T, with an offset, is read as the instant it names
  const res = await owner.api.post(`${V2}/groups/invite-link/create`, { chat_id: group.group_id, expires_at: '2099-06-01T03:00:00+03:00' })
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.data.expires_at, '2099-06-01T00:00:00.000Z')
})

test('integers in paths and bodies are real integers below 2^53: no Infinity, no hex, no fractions', async () => {
  const user = await server.registerUser()
  for (const id of ['1e400', '9007199254740993', '0x10', '1.0', '%207', 'Infinity']) {
    const res = await user.api.delete(`${V2}/sessions/${id}`)
    assertError(res, 400, 'validation_error')
    assert.match(res.body.error.message, /^id /, id)
  }
  for (const chatId of ['1e400', '9007199254740993', '-1e400', '1.5']) {
    const res = await user.api.post(`${V2}/messages/send`, undefined, {
      raw: `{"chat_id": ${chatId}, "content": "hi"}`,
      headers: { 'content-type': 'application/json' },
    })
    assertError(res, 400, 'validation_error')
    assert.match(res.body.error.message, /chat_id/, chatId)
  }
  // control: a real id that names nothing is looked up (404), not refused
  assertError(await user.api.delete(`${V2}/sessions/9007199254740991`), 404, 'not_found')
})

test('unknown fields are dropped before the handler (login with extras works, nothing leaks back)', async () => {
  const user = await server.registerUser()
  const res = await server.api.post(`${V2}/auth/login`, {
    login: user.username,
    password: user.password,
    is_admin: true,
    user_id: 1,
    __proto__x: 'y',
  })
  assert.equal(res.status, 200)
  assert.equal(res.body.data.user.user_id, user.id)
  assert.equal(res.body.data.user.is_admin, false)
  assert.equal(res.body.data.user.__proto__x, undefined)
  const me = await server.api.as(res.body.data.session_token).get(`${V2}/auth/me`)
  assert.equal(me.body.data.is_admin, false)
})

test('error responses carry no stack traces or file paths (validation, auth, 404, malformed)', async () => {
  const responses = [
    await server.api.post(`${V2}/auth/register`, { username: 'a b', password: 1 }),
    await server.api.get(`${V2}/auth/me`, { headers: { authorization: 'Bearer x' } }),
    await server.api.get(`${V2}/sessions/abc`),
    await server.api.post(`${V2}/auth/login`, undefined, { raw: '{"login":', headers: { 'content-type': 'application/json' } }),
    await server.api.post(`${V2}/auth/login`, undefined, { raw: '\u0000\u0001', headers: { 'content-type': 'application/json' } }),
    await server.api.delete(`${V2}/sessions/99999999999999999999`),
  ]
  for (const res of responses) {
    assert.ok(res.status >= 400 && res.status < 500, `${res.status} ${res.text}`)
    assert.equal(res.body.success, false)
    assertNoLeak(res.text)
  }
})

// ---------------------------------------------------------------------------------------------
// Security headers

/** helmet's headers that act only on documents (or retired clients): pages get them, API responses not */
const DOCUMENT_HEADERS = [
  'cross-origin-opener-policy',
  'origin-agent-cluster',
  'referrer-policy',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
]

test('API responses carry the API set of security headers: CSP allowing nothing, no framing, nosniff, CORP, HSTS', async () => {
  const responses = [
    await server.api.get('/health'),
    await server.api.get(`${V2}/auth/me`),
    await server.api.get(`${V2}/nope`),
    await server.api.post(`${V2}/auth/login`, {}),
    await server.api.get('/openapi.json'),
  ]
  for (const res of responses) {
    const at = `${res.status} ${res.headers.get('content-type')}`
    assert.equal(res.headers.get('content-security-policy'), "default-src 'none'; frame-ancestors 'none'", at)
    assert.equal(res.headers.get('x-frame-options'), 'DENY', at)
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff', at)
    assert.equal(res.headers.get('cross-origin-resource-policy'), 'same-origin', at)
    assert.match(res.headers.get('strict-transport-security') ?? '', /^max-age=\d+/, at)
    for (const name of DOCUMENT_HEADERS) assert.equal(res.headers.get(name), null, `${name} on ${at}`)
    assert.equal(res.headers.get('x-powered-by'), null, 'no x-powered-by')
  }
})

// the web client's pages (/, /login…) have a stricter CSP still: test/web/web-pages.test.ts
test("pages (web pages, /docs, file routes) carry helmet's full set with the page CSP instead", async () => {
  for (const path of ['/qr/nope', '/docs', '/docs/static/index.html', '/files/nope.png']) {
    const res = await server.api.get(path)
    const csp = res.headers.get('content-security-policy') ?? ''
    assert.match(csp, /default-src 'self'/, `${path}: ${csp}`)
    assert.match(csp, /frame-ancestors 'self'/, `${path}: ${csp}`)
    assert.match(csp, /object-src 'none'/, `${path}: ${csp}`)
    assert.equal(res.headers.get('x-frame-options'), 'SAMEORIGIN', path)
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path)
    for (const name of DOCUMENT_HEADERS) assert.ok(res.headers.get(name) !== null, `${name} on ${path}`)
  }
})

// ---------------------------------------------------------------------------------------------
// CORS

test('the default server grants no cross-origin access', async () => {
  const get = await server.api.get('/health', { headers: { origin: 'https://evil.example' } })
  assert.equal(get.status, 200)
  assert.equal(get.headers.get('access-control-allow-origin'), null)
  assert.equal(get.headers.get('access-control-allow-credentials'), null)
  const preflight = await server.api.request('OPTIONS', `${V2}/auth/login`, undefined, {
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  })
  assert.equal(preflight.headers.get('access-control-allow-origin'), null)
})

test('CORS_ORIGINS allows exactly the listed origins (preflight and simple requests)', async () => {
  const cors = await startTestServer({ env: { CORS_ORIGINS: 'https://app.example' } })
  const preflightHeaders = { 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' }
  const allowed = await cors.api.request('OPTIONS', `${V2}/auth/login`, undefined, {
    headers: { origin: 'https://app.example', ...preflightHeaders },
  })
  assert.ok(allowed.status === 204 || allowed.status === 200, `${allowed.status}`)
  assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://app.example')
  assert.match(allowed.headers.get('access-control-allow-methods') ?? '', /POST/)
  assert.equal(allowed.headers.get('access-control-allow-credentials'), 'true')

  const other = await cors.api.request('OPTIONS', `${V2}/auth/login`, undefined, {
    headers: { origin: 'https://evil.example', ...preflightHeaders },
  })
  assert.equal(other.headers.get('access-control-allow-origin'), null)

  const lookalike = await cors.api.request('OPTIONS', `${V2}/auth/login`, undefined, {
    headers: { origin: 'https://app.example.evil.example', ...preflightHeaders },
  })
  assert.equal(lookalike.headers.get('access-control-allow-origin'), null)

  const simple = await cors.api.get('/health', { headers: { origin: 'https://app.example' } })
  assert.equal(simple.headers.get('access-control-allow-origin'), 'https://app.example')
  const simpleOther = await cors.api.get('/health', { headers: { origin: 'https://evil.example' } })
  assert.equal(simpleOther.headers.get('access-control-allow-origin'), null)
})

test('with CORS_ORIGINS, a preflight grants the request headers the API reads, and a browser may read Retry-After', async () => {
  const cors = await startTestServer({ env: { CORS_ORIGINS: 'https://app.example', REGISTER_RATE_LIMIT: '1/300' } })
  const origin = 'https://app.example'
  const wanted = ['authorization', 'content-type', 'idempotency-key']
  const preflight = await cors.api.request('OPTIONS', `${V2}/messages/send`, undefined, {
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': wanted.join(', ') },
  })
  assert.equal(preflight.status, 204)
  const granted = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/)
  for (const name of wanted) assert.ok(granted.includes(name), `${name} in ${granted.join()}`)
  // tus's own headers, at its endpoint
  const tusHeaders = ['authorization', 'tus-resumable', 'upload-length', 'upload-metadata', 'upload-offset', 'content-type']
  const tus = await cors.api.request('OPTIONS', '/uploads/tus', undefined, {
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': tusHeaders.join(', ') },
  })
  assert.ok(tus.status < 300, `${tus.status} ${tus.text}`)
  assert.equal(tus.headers.get('access-control-allow-origin'), origin)
  const tusGranted = (tus.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/)
  for (const name of tusHeaders) assert.ok(tusGranted.includes(name), `${name} in ${tusGranted.join()}`)

  // a browser script reads only the answer headers it is allowed to: a 429's Retry-After is one
  assert.equal((await register(cors.api, { origin })).status, 201)
  const limited = await register(cors.api, { origin })
  assert.equal(limited.status, 429)
  assert.equal(limited.headers.get('access-control-allow-origin'), origin)
  const exposed = (limited.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/)
  assert.ok(exposed.includes('retry-after'), `exposed: ${exposed.join()}`)
})

// ---------------------------------------------------------------------------------------------
// OpenAPI

test('GET /openapi.json is OpenAPI 3 with the V2, admin and service paths and no V3 duplicates', async () => {
  const res = await server.api.get('/openapi.json')
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
  const doc = res.body
  assert.match(doc.openapi, /^3\.\d+\.\d+$/)
  assert.equal(doc.info.title, 'Tern')
  const paths = Object.keys(doc.paths)
  for (const p of [`${V2}/auth/register`, `${V2}/auth/login`, `${V2}/sessions`, '/api/admin/users', '/health', '/stats']) {
    assert.ok(paths.includes(p), `${p} documented (have: ${paths.join(', ')})`)
  }
  assert.ok(doc.paths[`${V2}/auth/register`].post, 'register is a POST')
  assert.ok(doc.paths[`${V2}/sessions`].get, 'sessions list is a GET')
  assert.deepEqual(
    paths.filter((p) => p.startsWith('/api.v3/')),
    [],
    'V3 is hidden',
  )
  assert.ok(!paths.includes('/openapi.json'))
  assert.ok(doc.components.securitySchemes.bearer)
})

test('the register request body schema in OpenAPI requires username and password', async () => {
  const doc = (await server.api.get('/openapi.json')).body
  const body = doc.paths[`${V2}/auth/register`].post.requestBody
  assert.equal(body.required, true)
  const schema = body.content['application/json'].schema
  assert.deepEqual([...schema.required].sort(), ['password', 'username'])
  assert.deepEqual(Object.keys(schema.properties).sort(), ['display_name', 'email', 'password', 'username'])
  assert.equal(schema.properties.username.pattern, '^[A-Za-z0-9_]{3,32}$')
  assert.equal(schema.properties.password.minLength, 8)
})

test('GET /docs serves the Swagger UI HTML', async () => {
  const res = await server.api.get('/docs', { redirect: 'follow', headers: { accept: 'text/html' } })
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(res.text, /swagger-ui/i)
})

// ---------------------------------------------------------------------------------------------
// Rate limits

const register = (api: typeof server.api, headers: Record<string, string> = {}) =>
  api.post(`${V2}/auth/register`, { username: uniqueName('rl'), password: 'long enough' }, { headers })

function assertRateLimited(res: Response, windowSeconds: number) {
  assertError(res, 429, 'rate_limited')
  const retry = res.headers.get('retry-after')
  assert.match(retry ?? '', /^\d+$/, `Retry-After is an integer number of seconds (got ${retry})`)
  assert.ok(Number(retry) > 0 && Number(retry) <= windowSeconds, `Retry-After ${retry}`)
}

test('registration is limited per client IP: the 6th within the window is 429 with Retry-After', async () => {
  const limited = await startTestServer({ env: { REGISTER_RATE_LIMIT: '5/300' } })
  for (let i = 0; i < 5; i++) assert.equal((await register(limited.api)).status, 201, `registration ${i + 1}`)
  const sixth = await register(limited.api)
  assertRateLimited(sixth, 300)
  // the limit is per route: login and the rest still answer
  assert.equal((await limited.api.get('/health')).status, 200)
})

test('the registration limit is per client, shared by every mount (V2, V3, /api/auth)', async () => {
  const limited = await startTestServer({ env: { REGISTER_RATE_LIMIT: '5/300' } })
  for (let i = 0; i < 5; i++) assert.equal((await register(limited.api)).status, 201, `registration ${i + 1}`)
  for (const prefix of ['/api/auth', '/api.v3/api/auth']) {
    const res = await limited.api.post(`${prefix}/register`, { username: uniqueName('rl'), password: 'long enough' })
    assertRateLimited(res, 300)
  }
})

test('failed registrations count against the limit too', async () => {
  const limited = await startTestServer({ env: { REGISTER_RATE_LIMIT: '3/300' } })
  for (let i = 0; i < 3; i++) {
    const res = await limited.api.post(`${V2}/auth/register`, { username: 'no', password: 'x' })
    assert.equal(res.status, 400)
  }
  assertRateLimited(await register(limited.api), 300)
})

test('login has its own limit (LOGIN_RATE_LIMIT)', async () => {
  const limited = await startTestServer({ env: { LOGIN_RATE_LIMIT: '3/60' } })
  const user = await limited.registerUser()
  for (let i = 0; i < 3; i++) {
    const res = await limited.api.post(`${V2}/auth/login`, { login: user.username, password: i === 0 ? user.password : 'wrong password' })
    assert.equal(res.status, i === 0 ? 200 : 401)
  }
  assertRateLimited(await limited.api.post(`${V2}/auth/login`, { login: user.username, password: user.password }), 60)
})

test('with TRUST_PROXY=1, clients behind the proxy are counted separately, by the address the proxy appended', async () => {
  const proxied = await startTestServer({ env: { REGISTER_RATE_LIMIT: '5/300', TRUST_PROXY: '1' } })
  for (let i = 0; i < 5; i++) {
    // what an appending proxy sends: the client's own claim first, the address it saw last
    const forwarded = `${i}.6.6.6, 10.0.0.1`
    assert.equal((await register(proxied.api, { 'x-forwarded-for': forwarded })).status, 201, `10.0.0.1 #${i + 1}`)
  }
  assertRateLimited(await register(proxied.api, { 'x-forwarded-for': '7.7.7.7, 10.0.0.1' }), 300)
  assert.equal((await register(proxied.api, { 'x-forwarded-for': '10.0.0.1, 10.0.0.2' })).status, 201, 'another client is not limited')
})

test('an IPv6 client is limited by its /64: rotating addresses within it does not reset the limit; the next /64 is another client', async () => {
  const proxied = await startTestServer({ env: { REGISTER_RATE_LIMIT: '5/300', TRUST_PROXY: '1' } })
  for (let i = 0; i < 5; i++) {
    // a new address of the same /64 each time, in varying spellings
    const forwarded = `2001:db8:aa:1:${(i + 1).toString(16)}::${i + 7}`
    assert.equal((await register(proxied.api, { 'x-forwarded-for': forwarded })).status, 201, `#${i + 1}`)
  }
  assertRateLimited(await register(proxied.api, { 'x-forwarded-for': '2001:0db8:00aa:0001:ffff:ffff:ffff:fffe' }), 300)
  assert.equal((await register(proxied.api, { 'x-forwarded-for': '2001:db8:aa:2::1' })).status, 201, 'the neighbouring /64 is not limited')
})

test("TRUST_PROXY as the proxy's address: only X-Forwarded-For from that peer is believed", async () => {
  const trusting = await startTestServer({ env: { REGISTER_RATE_LIMIT: '5/300', TRUST_PROXY: '127.0.0.1' } })
  for (let i = 0; i < 5; i++) {
    assert.equal((await register(trusting.api, { 'x-forwarded-for': `${i}.6.6.6, 10.0.3.7` })).status, 201)
  }
  assertRateLimited(await register(trusting.api, { 'x-forwarded-for': '9.9.9.9, 10.0.3.7' }), 300)
  assert.equal((await register(trusting.api, { 'x-forwarded-for': '10.0.3.8' })).status, 201, 'another client is not limited')
})

test('TRUST_PROXY as addresses and ranges: the client is the entry before the last trusted proxy; a peer not listed is believed in nothing', async () => {
  const ipOf = async (srv: typeof server, forwarded: string) => {
    const registered = await register(srv.api, { 'x-forwarded-for': forwarded })
    assert.equal(registered.status, 201, registered.text)
    const sessions = await srv.api.as(registered.body.data.session_token).get(`${V2}/sessions`)
    return sessions.body.items[0].ip_address
  }
  const chain = await startTestServer({ env: { TRUST_PROXY: '127.0.0.0/8, 10.0.3.0/24' } })
  assert.equal(await ipOf(chain, '6.6.6.6, 10.0.3.7'), '6.6.6.6')
  assert.equal(
    await ipOf(chain, '6.6.6.6, 5.5.5.5, 10.0.3.7'),
    '5.5.5.5',
    'the client may prepend anything: only what the proxies added counts',
  )
  const elsewhere = await startTestServer({ env: { TRUST_PROXY: '10.0.0.1' } })
  assert.equal(await ipOf(elsewhere, '6.6.6.6, 10.0.3.7'), '127.0.0.1')
})

test('with TRUST_PROXY unset, X-Forwarded-For is ignored (spoofing it does not bypass the limit)', async () => {
  const direct = await startTestServer({ env: { REGISTER_RATE_LIMIT: '5/300' } })
  for (let i = 0; i < 5; i++) {
    assert.equal((await register(direct.api, { 'x-forwarded-for': `10.0.1.${i + 1}` })).status, 201)
  }
  assertRateLimited(await register(direct.api, { 'x-forwarded-for': '10.0.2.99' }), 300)
  assertRateLimited(await register(direct.api), 300)
})

// ---------------------------------------------------------------------------------------------
// Request logs

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

test('request logs carry method, URL and status but never passwords, tokens or cookies', { timeout: 60_000 }, async () => {
  const dataDir = tempDir('tern-log-test-')
  const database = await createTestDatabase(dataDir)
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      LOG_LEVEL: 'info',
      // the in-process video service on a free port (5001 may be taken)
      VIDEO_PORT: '0',
      ...(testRedisUrl ? { REDIS_URL: testRedisUrl, REDIS_PREFIX: `tern-test-${randomBytes(6).toString('hex')}:` } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await exited
    }
    await database.drop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  // wait for "Tern is ready"
  const deadline = Date.now() + 30_000
  while (!stdout.includes('Tern is ready')) {
    if (child.exitCode !== null) assert.fail(`server exited early: ${stderr}\n${stdout}`)
    if (Date.now() > deadline) assert.fail(`server not ready in 30 s: ${stderr}\n${stdout}`)
    await new Promise((r) => setTimeout(r, 50))
  }

  const api = new Client(`http://127.0.0.1:${port}`)
  const username = uniqueName('log')
  const password = `pw-${randomBytes(12).toString('hex')}`
  const reg = await api.post(`${V2}/auth/register`, { username, password })
  assert.equal(reg.status, 201)
  const regToken: string = reg.body.data.session_token
  const login = await api.post('/api/auth/login', { login: username, password })
  assert.equal(login.status, 200)
  const cookieToken: string = login.body.data.session_token
  assert.match(login.headers.getSetCookie().join('\n'), /tern_session=/)
  const wrong = await api.post(`${V2}/auth/login`, { login: username, password: `${password}-wrong` })
  assert.equal(wrong.status, 401)
  assert.equal((await api.as(regToken).get(`${V2}/auth/me`)).status, 200)
  assert.equal((await api.get('/api/get_user_id', { headers: { cookie: `tern_session=${cookieToken}` } })).status, 204)
  const queryToken = `qt${randomBytes(16).toString('hex')}`
  const accessToken = `at${randomBytes(16).toString('hex')}`
  assert.equal((await api.get('/health', { query: { token: queryToken } })).status, 200)
  assert.equal((await api.get('/health', { query: { a: '1', access_token: accessToken } })).status, 200)
  assert.equal((await api.get(`${V2}/nope`, { query: { token: queryToken } })).status, 404)
  assert.equal(
    (
      await api.post(`${V2}/auth/login`, undefined, {
        raw: `{"login":"${username}","password":"${password}"`,
        headers: { 'content-type': 'application/json' },
      })
    ).status,
    400,
  )

  // let pino flush, then stop the server
  await new Promise((r) => setTimeout(r, 300))
  child.kill('SIGTERM')
  await exited
  const log = stdout + stderr

  // one line per request, with its method, URL, status and time
  const completed = log
    .split('\n')
    .filter((line) => line.includes('request completed'))
    .map((line) => JSON.parse(line))
  assert.ok(completed.length >= 8, `request completed lines (got ${completed.length})`)
  assert.ok(!log.includes('incoming request'), 'no second line per request')
  const health = completed.find((entry) => entry.req?.url?.startsWith('/health?token='))
  assert.ok(health, 'the /health?token= request is logged')
  assert.equal(health.req.method, 'GET')
  assert.equal(health.req.url, '/health?token=[redacted]')
  assert.ok(typeof health.req.ip === 'string' && health.req.ip.length > 0)
  assert.ok(health.reqId ?? health.req.id, 'a request id')
  assert.equal(health.res.statusCode, 200)
  assert.equal(typeof health.responseTime, 'number')

  for (const [what, secret] of [
    ['password', password],
    ['registration session token', regToken],
    ['cookie session token', cookieToken],
    ['token query parameter', queryToken],
    ['access_token query parameter', accessToken],
  ] as const) {
    assert.ok(!log.includes(secret), `the log must not contain the ${what}`)
  }
  assert.ok(!/authorization"\s*:\s*"Bearer/i.test(log), 'no Authorization header values')
  assert.ok(!/tern_session=[A-Za-z0-9_-]{10}/.test(log), 'no session cookie values')
})
