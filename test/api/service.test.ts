/**
 * Service helpers (docs/api.md): /health, /stats, the V1 cookie
 * session (/api/auth/login, /api/get_user_id, /logout) and the landing page (/; the admin panel at
 * /admin is tested in test/web/admin-panel.test.ts).
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import test from 'node:test'
import type { TestServer } from '../harness/server.js'
import { startTestServer, uniqueName } from '../harness/server.js'

const server = await startTestServer()
const V2 = '/api.v2/api'
const COOKIE = 'tern_session'

interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
}

/** A plain node:http GET, for headers fetch will not send (Host). */
function rawGet(baseUrl: string, path: string, headers: Record<string, string>): Promise<RawResponse> {
  const url = new URL(path, baseUrl)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'GET', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** The tern_session Set-Cookie line of a response, or undefined. */
function sessionCookieLine(headers: Headers): string | undefined {
  return headers.getSetCookie().find((line) => line.startsWith(`${COOKIE}=`))
}

/** Cookie attributes, lower-cased names → values ('' for flags). */
function cookieAttributes(line: string): Map<string, string> {
  const [, ...parts] = line.split(';')
  return new Map(
    parts.map((part) => {
      const [name, ...value] = part.trim().split('=')
      return [name.toLowerCase(), value.join('=')] as [string, string]
    }),
  )
}

/** Logs in through the V1 mount; returns the cookie value (the session token) and the Set-Cookie line. */
async function v1Login(srv: TestServer, login: string, password: string) {
  const res = await srv.api.post('/api/auth/login', { login, password })
  assert.equal(res.status, 200, res.text)
  const line = sessionCookieLine(res.headers)
  assert.ok(line, `login sets ${COOKIE} (got ${res.headers.getSetCookie().join(' | ')})`)
  const value = line.slice(COOKIE.length + 1).split(';')[0]
  return { res, line, value, cookie: `${COOKIE}=${value}` }
}

// ---------------------------------------------------------------------------------------------
// /health and /stats

test('GET /health is 200 with status ok at the top level and in data', async () => {
  const res = await server.api.get('/health')
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
  assert.equal(res.body.success, true)
  assert.equal(res.body.status, 'ok')
  assert.equal(res.body.data.status, 'ok')
  assert.equal(res.body.data.database, 'ok')
  assert.deepEqual(Object.keys(res.body).sort(), ['data', 'status', 'success'])
})

test('GET /health needs no authentication and ignores a bad token', async () => {
  const res = await server.api.get('/health', { headers: { authorization: 'Bearer not-a-session' } })
  assert.equal(res.status, 200)
  assert.equal(res.body.status, 'ok')
})

test('GET /stats returns public counts, and registering a user increments users', async () => {
  const before = await server.api.get('/stats')
  assert.equal(before.status, 200)
  assert.equal(before.body.success, true)
  assert.deepEqual(Object.keys(before.body.data).sort(), ['channels', 'messages', 'users'])
  assert.ok(Number.isInteger(before.body.data.users) && before.body.data.users >= 0)
  assert.ok(Number.isInteger(before.body.data.messages) && before.body.data.messages >= 0)
  await server.registerUser()
  const after = await server.api.get('/stats')
  // tests in a file run one after another, so exactly one more
  assert.equal(after.body.data.users, before.body.data.users + 1)
})

test('GET /stats counts exactly on a fresh server: users, messages and channels', async () => {
  const fresh = await startTestServer()
  assert.deepEqual((await fresh.api.get('/stats')).body, { success: true, data: { users: 0, messages: 0, channels: 0 } })
  const ann = await fresh.registerUser()
  const bob = await fresh.registerUser()
  await ann.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'one' })
  await bob.api.post(`${V2}/messages/send`, { receiver_id: ann.id, content: 'two' })
  assert.equal((await ann.api.post(`${V2}/channels/create`, { title: 'News' })).status, 200)
  assert.deepEqual((await fresh.api.get('/stats')).body, { success: true, data: { users: 2, messages: 2, channels: 1 } })
})

test('GET /stats for a browser is a page with the same figures; an API client still gets JSON', async () => {
  const html = await server.api.get('/stats', { headers: { accept: 'text/html,application/xhtml+xml,application/json;q=0.9' } })
  assert.equal(html.status, 200)
  assert.match(html.headers.get('content-type') ?? '', /^text\/html/)
  const json = await server.api.get('/stats')
  assert.match(html.text, new RegExp(`<dt>Users</dt><dd>${new Intl.NumberFormat('en').format(json.body.data.users)}</dd>`))
  assert.match(html.headers.get('content-security-policy') ?? '', /script-src 'self'/)
  assert.match(json.headers.get('content-type') ?? '', /^application\/json/)
})

// ---------------------------------------------------------------------------------------------
// The V1 cookie session

test('POST /api/auth/login sets tern_session: HttpOnly, SameSite=Lax, Path=/, no Secure on http', async () => {
  const user = await server.registerUser()
  const { res, line, value } = await v1Login(server, user.username, user.password)
  assert.equal(value, res.body.data.session_token, 'the cookie carries the session token')
  const attrs = cookieAttributes(line)
  assert.ok(attrs.has('httponly'), line)
  assert.equal(attrs.get('samesite')?.toLowerCase(), 'lax', line)
  assert.equal(attrs.get('path'), '/', line)
  assert.ok(!attrs.has('secure'), `no Secure on an http base URL: ${line}`)
  assert.ok(!attrs.has('domain'), `host-only cookie: ${line}`)
  assert.equal(attrs.get('max-age'), String(30 * 86_400), `lives as long as the session: ${line}`)
})

test('with an https PUBLIC_BASE_URL the cookie is Secure', async () => {
  const secure = await startTestServer({ env: { PUBLIC_BASE_URL: 'https://tern.example' } })
  const user = await secure.registerUser()
  const { line } = await v1Login(secure, user.username, user.password)
  const attrs = cookieAttributes(line)
  assert.ok(attrs.has('secure'), line)
  assert.ok(attrs.has('httponly'), line)
  assert.equal(attrs.get('samesite')?.toLowerCase(), 'lax', line)
})

test('V2 and V3 logins set no cookie', async () => {
  const user = await server.registerUser()
  for (const prefix of [`${V2}/auth`, '/api.v3/api/auth']) {
    const res = await server.api.post(`${prefix}/login`, { login: user.username, password: user.password })
    assert.equal(res.status, 200, prefix)
    assert.deepEqual(res.headers.getSetCookie(), [], prefix)
  }
  const reg = await server.api.post(`${V2}/auth/register`, { username: uniqueName(), password: 'long enough' })
  assert.equal(reg.status, 201)
  assert.deepEqual(reg.headers.getSetCookie(), [])
})

test('a failed V1 login sets no cookie', async () => {
  const user = await server.registerUser()
  const res = await server.api.post('/api/auth/login', { login: user.username, password: 'wrong password' })
  assert.equal(res.status, 401)
  assert.equal(res.body.error.code, 'unauthorized')
  assert.equal(sessionCookieLine(res.headers), undefined)
})

test('GET /api/get_user_id with the cookie is 204 with X-User-Id', async () => {
  const user = await server.registerUser()
  const { cookie } = await v1Login(server, user.username, user.password)
  const res = await server.api.get('/api/get_user_id', { headers: { cookie } })
  assert.equal(res.status, 204)
  assert.equal(res.headers.get('x-user-id'), String(user.id))
  assert.equal(res.text, '')
})

test('GET /api/get_user_id without a session, or with a bogus cookie, is a 401 envelope', async () => {
  for (const headers of [{}, { cookie: `${COOKIE}=bogus-session-token` }, { cookie: `${COOKIE}=` }, { cookie: 'other=1' }] as Record<
    string,
    string
  >[]) {
    const res = await server.api.get('/api/get_user_id', { headers })
    assert.equal(res.status, 401, JSON.stringify(headers))
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
    assert.equal(res.body.success, false)
    assert.equal(res.body.error.code, 'unauthorized')
    assert.equal(res.headers.get('x-user-id'), null)
  }
})

test('the cookie alone does not authorize a change: POST /api/auth/logout with just the cookie is 403, with its CSRF token 200', async () => {
  const user = await server.registerUser()
  const { cookie } = await v1Login(server, user.username, user.password)
  const out = await server.api.post('/api/auth/logout', undefined, { headers: { cookie } })
  assert.equal(out.status, 403)
  assert.equal(out.body.error.code, 'forbidden')
  const outV2 = await server.api.post(`${V2}/auth/logout`, undefined, { headers: { cookie, 'x-csrf-token': 'not-the-token' } })
  assert.equal(outV2.status, 403)
  // the session is still alive
  const still = await server.api.get('/api/get_user_id', { headers: { cookie } })
  assert.equal(still.status, 204)
  assert.equal(still.headers.get('x-user-id'), String(user.id))
  // with the session's CSRF token (GET /api/web/session) the same request goes through
  const csrf = (await server.api.get('/api/web/session', { headers: { cookie } })).body.data.csrf_token
  const done = await server.api.post('/api/auth/logout', undefined, { headers: { cookie, 'x-csrf-token': csrf } })
  assert.equal(done.status, 200)
  assert.equal((await server.api.get('/api/get_user_id', { headers: { cookie } })).status, 401)
})

test('the cookie session reads the bearer API on GET (same session)', async () => {
  const user = await server.registerUser()
  const { cookie } = await v1Login(server, user.username, user.password)
  const me = await server.api.get('/api/auth/me', { headers: { cookie } })
  assert.equal(me.status, 200)
  assert.equal(me.body.data.user_id, user.id)
})

test('a bearer header wins over the cookie', async () => {
  const a = await server.registerUser()
  const b = await server.registerUser()
  const { cookie } = await v1Login(server, a.username, a.password)
  const res = await b.api.get('/api/get_user_id', { headers: { cookie } })
  assert.equal(res.status, 204)
  assert.equal(res.headers.get('x-user-id'), String(b.id))
})

test('V1 logout with the bearer token ends the session and clears the cookie', async () => {
  const user = await server.registerUser()
  const { cookie, value } = await v1Login(server, user.username, user.password)
  const out = await server.api.as(value).post('/api/auth/logout', undefined, { headers: { cookie } })
  assert.equal(out.status, 200)
  const cleared = sessionCookieLine(out.headers)
  assert.ok(cleared, 'clears the cookie')
  assert.match(cleared, /^tern_session=;/)
  assert.equal((await server.api.get('/api/get_user_id', { headers: { cookie } })).status, 401)
})

// ---------------------------------------------------------------------------------------------
// /logout: GET shows the page, POST (with the page's CSRF token) signs out

function assertClearsCookie(line: string | undefined) {
  assert.ok(line, 'a Set-Cookie clearing tern_session')
  assert.match(line, /^tern_session=;/, line)
  const attrs = cookieAttributes(line)
  assert.equal(attrs.get('path'), '/', line)
  const maxAge = attrs.get('max-age')
  const expires = attrs.get('expires')
  assert.ok(maxAge === '0' || (expires !== undefined && Date.parse(expires) < Date.now()), `expired: ${line}`)
}

test('POST /logout from the sign-out page ends the cookie session, clears the cookie, marks the user offline and redirects to /; the GET alone ends nothing', async () => {
  const user = await server.registerUser()
  const { cookie } = await v1Login(server, user.username, user.password)
  const other = await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  const watcher = server.api.as(other.body.data.session_token)
  const before = await watcher.get(`${V2}/auth/me`)
  assert.equal(before.body.data.last_seen, null)

  // a GET (a link, an image, another site's navigation) shows the page and ends nothing
  const signOutPage = await server.api.get('/logout', { headers: { cookie } })
  assert.equal(signOutPage.status, 200)
  assert.match(signOutPage.headers.get('content-type') ?? '', /^text\/html/)
  assert.equal(sessionCookieLine(signOutPage.headers), undefined, 'the cookie is kept')
  assert.equal((await server.api.get('/api/get_user_id', { headers: { cookie } })).status, 204, 'still signed in')
  const csrf = /name="_csrf" value="([^"]+)"/.exec(signOutPage.text)![1]

  const started = Date.now()
  const form = { cookie, 'content-type': 'application/x-www-form-urlencoded' }
  assert.equal((await server.api.post('/logout', undefined, { raw: '_csrf=stale', headers: form })).status, 403)
  assert.equal((await server.api.get('/api/get_user_id', { headers: { cookie } })).status, 204, 'a stale token ends nothing')
  const res = await server.api.post('/logout', undefined, { raw: `_csrf=${encodeURIComponent(csrf)}`, headers: form })
  assert.equal(res.status, 303)
  assert.equal(res.headers.get('location'), '/')
  assertClearsCookie(sessionCookieLine(res.headers))

  assert.equal((await server.api.get('/api/get_user_id', { headers: { cookie } })).status, 401)
  const me = await watcher.get(`${V2}/auth/me`)
  assert.equal(me.status, 200, 'the other (bearer) session survives')
  assert.equal(me.body.data.is_online, false)
  assert.ok(me.body.data.last_seen, 'last_seen is set')
  assert.ok(Date.parse(me.body.data.last_seen) >= started - 5_000, me.body.data.last_seen)
  assert.ok(Date.parse(me.body.data.last_seen) <= Date.now() + 5_000, me.body.data.last_seen)
})

test('GET /logout without a cookie, or with a bogus one, still redirects to / and clears the cookie', async () => {
  for (const headers of [{}, { cookie: `${COOKIE}=bogus` }] as Record<string, string>[]) {
    const res = await server.api.get('/logout', { headers })
    assert.ok(res.status >= 300 && res.status < 400, `redirect, got ${res.status}`)
    assert.equal(res.headers.get('location'), '/')
    assertClearsCookie(sessionCookieLine(res.headers))
  }
})

test('GET /logout ignores a bearer header: only the cookie session ends', async () => {
  const user = await server.registerUser()
  const res = await user.api.get('/logout')
  assert.ok(res.status >= 300 && res.status < 400)
  assert.equal((await user.api.get(`${V2}/auth/me`)).status, 200, 'a bearer session is not ended by a GET')
})

// ---------------------------------------------------------------------------------------------
// Pages

test('GET / is the HTML landing page with links to the docs', async () => {
  const res = await server.api.get('/')
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(res.text, /<title>Tern<\/title>/)
  assert.match(res.text, /href="\/docs"/)
  assert.match(res.text, /href="\/openapi.json"/)
  assert.match(res.text, /\d+ registered users?/)
})

test('GET / on an admin. host redirects to /admin', async () => {
  for (const host of ['admin.example.com', 'ADMIN.example.com', `admin.localhost:${new URL(server.url).port}`]) {
    const res = await rawGet(server.url, '/', { host })
    assert.ok(res.status >= 300 && res.status < 400, `${host}: ${res.status}`)
    assert.equal(res.headers.location, '/admin', host)
  }
  for (const host of ['example.com', 'notadmin.example.com', 'www.admin.example.com']) {
    const res = await rawGet(server.url, '/', { host })
    assert.equal(res.status, 200, host)
    assert.match(res.headers['content-type'] ?? '', /^text\/html/, host)
  }
})

// the admin panel (/admin) has its own, stricter set: test/web/admin-panel.test.ts
test('HTML pages carry the security headers too', async () => {
  for (const path of ['/']) {
    const res = await server.api.get(path)
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path)
    assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors '(self|none)'/, path)
    assert.equal(res.headers.get('cross-origin-opener-policy'), 'same-origin', path)
  }
})
