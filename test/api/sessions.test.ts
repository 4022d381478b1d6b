import assert from 'node:assert/strict'
import test from 'node:test'
import { assertError } from '../harness/assert.js'
import { TestClock } from '../harness/clock.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'

const server = await startTestServer()
// a second server whose clock the time tests move forward, with a one-day sliding lifetime
const clock = new TestClock()
const timed = await startTestServer({ clock, env: { SESSION_TTL_DAYS: '1' } })
const V2 = '/api.v2/api'
const V3 = '/api.v3/api'
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const MINUTE = 60_000
const HOUR = 3_600_000

const mask = (token: string) => `${token.slice(0, 6)}…`

/** Logs the user in again (a new session); returns the new token. */
async function login(srv: TestServer, user: TestUser, device?: string, userAgent?: string): Promise<string> {
  const res = await srv.api.post(
    `${V2}/auth/login`,
    { login: user.username, password: user.password, ...(device ? { device } : {}) },
    userAgent ? { headers: { 'user-agent': userAgent } } : {},
  )
  assert.equal(res.status, 200, res.text)
  return res.body.data.session_token
}

test('the sessions list is a paginated envelope of masked sessions with exactly one current', async () => {
  const user = await server.registerUser()
  const phone = await login(server, user, 'Phone A', 'TernTest-Phone/1.0')
  const laptop = await login(server, user, 'Laptop B', 'TernTest-Laptop/2.0')
  const allTokens = [user.token, phone, laptop]

  const res = await server.api.as(phone).get(`${V2}/sessions`)
  assert.equal(res.status, 200)
  assert.deepEqual(Object.keys(res.body).sort(), ['items', 'page', 'pages', 'per_page', 'success', 'total'])
  assert.equal(res.body.success, true)
  assert.equal(res.body.page, 1)
  assert.equal(res.body.per_page, 20)
  assert.equal(res.body.total, 3)
  assert.equal(res.body.pages, 1)
  assert.equal(res.body.items.length, 3)

  for (const item of res.body.items) {
    assert.deepEqual(Object.keys(item).sort(), [
      'created_at',
      'device',
      'id',
      'ip_address',
      'is_current',
      'last_active',
      'method',
      'session_token',
      'user_agent',
    ])
    assert.equal(item.method, 'password')
    assert.equal(typeof item.id, 'number')
    assert.ok(Number.isInteger(item.id))
    assert.match(item.created_at, ISO)
    assert.match(item.last_active, ISO)
    assert.equal(typeof item.is_current, 'boolean')
    assert.match(item.session_token, /^[A-Za-z0-9_-]{6}…$/)
    assert.equal(item.ip_address, '127.0.0.1')
  }
  for (const token of allTokens) {
    assert.ok(!res.text.includes(token), 'a full session token never appears in the list')
    assert.ok(!res.text.includes(token.slice(0, 7)), 'no more than 6 characters of a token are shown')
  }

  const byDevice = new Map(res.body.items.map((s: any) => [s.device, s]))
  const phoneItem: any = byDevice.get('Phone A')
  const laptopItem: any = byDevice.get('Laptop B')
  const registerItem: any = byDevice.get(null)
  assert.ok(phoneItem && laptopItem && registerItem, JSON.stringify(res.body.items))
  assert.equal(phoneItem.session_token, mask(phone))
  assert.equal(laptopItem.session_token, mask(laptop))
  assert.equal(registerItem.session_token, mask(user.token))
  assert.equal(phoneItem.user_agent, 'TernTest-Phone/1.0')
  assert.equal(laptopItem.user_agent, 'TernTest-Laptop/2.0')

  const current = res.body.items.filter((s: any) => s.is_current)
  assert.equal(current.length, 1)
  assert.equal(current[0].id, phoneItem.id)

  // The same list seen through another session marks that one as current instead.
  const fromLaptop = await server.api.as(laptop).get(`${V2}/sessions`)
  const currentIds = fromLaptop.body.items.filter((s: any) => s.is_current).map((s: any) => s.id)
  assert.deepEqual(currentIds, [laptopItem.id])
})

test('the list holds only the caller’s own sessions', async () => {
  const alice = await server.registerUser()
  const bob = await server.registerUser()
  await login(server, bob, 'Bob phone')
  const res = await alice.api.get(`${V2}/sessions`)
  assert.equal(res.status, 200)
  assert.equal(res.body.total, 1)
  assert.equal(res.body.items.length, 1)
  assert.equal(res.body.items[0].session_token, mask(alice.token))
  assert.equal(res.body.items[0].is_current, true)
})

test('pagination: 5 sessions at per_page=2 make 3 pages, the last with 1 item', async () => {
  const user = await server.registerUser()
  for (let i = 0; i < 4; i++) await login(server, user, `device ${i}`)
  const seen: number[] = []
  for (const page of [1, 2, 3]) {
    const res = await user.api.get(`${V2}/sessions`, { query: { page, per_page: 2 } })
    assert.equal(res.status, 200)
    assert.equal(res.body.page, page)
    assert.equal(res.body.per_page, 2)
    assert.equal(res.body.total, 5)
    assert.equal(res.body.pages, 3)
    assert.equal(res.body.items.length, page === 3 ? 1 : 2)
    seen.push(...res.body.items.map((s: any) => s.id))
  }
  assert.equal(new Set(seen).size, 5, 'pages do not overlap and together hold every session')

  const beyond = await user.api.get(`${V2}/sessions`, { query: { page: 4, per_page: 2 } })
  assert.equal(beyond.status, 200)
  assert.deepEqual(beyond.body.items, [])
  assert.equal(beyond.body.total, 5)
  assert.equal(beyond.body.pages, 3)
})

test('bad pagination parameters are 400 validation_error', async () => {
  const user = await server.registerUser()
  for (const query of [
    { per_page: 101 },
    { per_page: 0 },
    { per_page: 'abc' },
    { per_page: -1 },
    { page: 0 },
    { page: 'abc' },
    { page: 1.5 },
  ]) {
    const res = await user.api.get(`${V2}/sessions`, { query })
    assertError(res, 400, 'validation_error')
  }
  // the bounds themselves are fine
  const max = await user.api.get(`${V2}/sessions`, { query: { per_page: 100 } })
  assert.equal(max.status, 200)
  assert.equal(max.body.per_page, 100)
  const min = await user.api.get(`${V2}/sessions`, { query: { per_page: 1 } })
  assert.equal(min.status, 200)
  assert.equal(min.body.items.length, 1)
})

test('revoking another own session: 200 with a message, then that token is 401 and unlisted', async () => {
  const user = await server.registerUser()
  const other = await login(server, user, 'to revoke')
  const list = await user.api.get(`${V2}/sessions`)
  const target = list.body.items.find((s: any) => s.device === 'to revoke')
  assert.ok(target)

  const res = await user.api.delete(`${V2}/sessions/${target.id}`)
  assert.equal(res.status, 200)
  assert.equal(res.body.success, true)
  assert.equal(typeof res.body.data.message, 'string')
  assert.ok(res.body.data.message.length > 0)

  assertError(await server.api.as(other).get(`${V2}/auth/me`), 401, 'unauthorized')
  assertError(await server.api.as(other).get(`${V2}/sessions`), 401, 'unauthorized')
  assert.equal((await user.api.get(`${V2}/auth/me`)).status, 200, 'the caller’s own session is untouched')

  const after = await user.api.get(`${V2}/sessions`)
  assert.equal(after.body.total, 1)
  assert.ok(!after.body.items.some((s: any) => s.id === target.id))

  // a revoked session cannot be revoked twice
  assertError(await user.api.delete(`${V2}/sessions/${target.id}`), 404, 'not_found')
})

test('revoking the current session works and ends it', async () => {
  const user = await server.registerUser()
  const spare = await login(server, user)
  const list = await user.api.get(`${V2}/sessions`)
  const current = list.body.items.find((s: any) => s.is_current)
  const res = await user.api.delete(`${V2}/sessions/${current.id}`)
  assert.equal(res.status, 200)
  assert.equal(typeof res.body.data.message, 'string')
  assertError(await user.api.get(`${V2}/auth/me`), 401, 'unauthorized')
  const rest = await server.api.as(spare).get(`${V2}/sessions`)
  assert.equal(rest.status, 200)
  assert.equal(rest.body.total, 1)
  assert.equal(rest.body.items[0].is_current, true)
})

test('another user’s session id is 404 and that session keeps working (no IDOR)', async () => {
  const victim = await server.registerUser()
  const attacker = await server.registerUser()
  const victimSession = (await victim.api.get(`${V2}/sessions`)).body.items[0]

  assertError(await attacker.api.delete(`${V2}/sessions/${victimSession.id}`), 404, 'not_found')
  assertError(await attacker.api.delete(`${V3}/sessions/${victimSession.id}`), 404, 'not_found')

  assert.equal((await victim.api.get(`${V2}/auth/me`)).status, 200)
  const list = await victim.api.get(`${V2}/sessions`)
  assert.deepEqual(
    list.body.items.map((s: any) => s.id),
    [victimSession.id],
  )
})

test('unknown session id is 404; a non-integer or out-of-range id is 400', async () => {
  const user = await server.registerUser()
  assertError(await user.api.delete(`${V2}/sessions/987654321`), 404, 'not_found')
  for (const id of ['abc', '1.5', '0', '-3', '99999999999999999999']) {
    assertError(await user.api.delete(`${V2}/sessions/${id}`), 400, 'validation_error')
  }
  assert.equal((await user.api.get(`${V2}/auth/me`)).status, 200)
})

test('without a token (or with a bad one) both routes are 401', async () => {
  const user = await server.registerUser()
  const id = (await user.api.get(`${V2}/sessions`)).body.items[0].id
  for (const prefix of [V2, V3]) {
    assertError(await server.api.get(`${prefix}/sessions`), 401, 'unauthorized')
    assertError(await server.api.delete(`${prefix}/sessions/${id}`), 401, 'unauthorized')
    const bogus = server.api.as('x'.repeat(43))
    assertError(await bogus.get(`${prefix}/sessions`), 401, 'unauthorized')
    assertError(await bogus.delete(`${prefix}/sessions/${id}`), 401, 'unauthorized')
  }
  assert.equal((await user.api.get(`${V2}/auth/me`)).status, 200, 'nothing was revoked')
})

test('the V3 mount lists and revokes the same sessions', async () => {
  const user = await server.registerUser()
  const other = await login(server, user, 'v3 device')
  const v2 = await user.api.get(`${V2}/sessions`)
  const v3 = await user.api.get(`${V3}/sessions`)
  assert.equal(v3.status, 200)
  assert.deepEqual(v3.body, v2.body)
  const target = v3.body.items.find((s: any) => s.device === 'v3 device')
  const res = await user.api.delete(`${V3}/sessions/${target.id}`)
  assert.equal(res.status, 200)
  assert.equal(typeof res.body.data.message, 'string')
  assertError(await server.api.as(other).get(`${V3}/auth/me`), 401, 'unauthorized')
  assert.equal((await user.api.get(`${V2}/sessions`)).body.total, 1)
})

test('logout removes the session from the user’s list seen from another session', async () => {
  const user = await server.registerUser()
  const leaving = await login(server, user, 'leaving')
  const before = await user.api.get(`${V2}/sessions`)
  assert.equal(before.body.total, 2)
  assert.ok(before.body.items.some((s: any) => s.device === 'leaving'))

  const out = await server.api.as(leaving).post(`${V2}/auth/logout`)
  assert.equal(out.status, 200)

  const after = await user.api.get(`${V2}/sessions`)
  assert.equal(after.body.total, 1)
  assert.deepEqual(
    after.body.items.map((s: any) => s.device),
    [null],
  )
  assert.equal(after.body.items[0].is_current, true)
  assertError(await server.api.as(leaving).get(`${V2}/auth/me`), 401, 'unauthorized')
})

// ---- time: a server with a controllable clock and a one-day sliding lifetime ----------------

async function currentSession(user: TestUser) {
  const res = await user.api.get(`${V2}/sessions`)
  assert.equal(res.status, 200, res.text)
  const current = res.body.items.find((s: any) => s.is_current)
  assert.ok(current, 'the caller’s session is listed')
  return current
}

test('last_active is written at most once a minute', async () => {
  const user = await timed.registerUser()
  const first = await currentSession(user)
  assert.equal(first.last_active, first.created_at, 'a new session was last active when it was created')

  clock.advance(30_000)
  assert.equal((await user.api.get(`${V2}/auth/me`)).status, 200)
  const within = await currentSession(user)
  assert.equal(within.last_active, first.created_at, 'a request within a minute does not move last_active')

  clock.advance(31_000) // 61 s after the last write
  const before = clock.now()
  const moved = await currentSession(user)
  const movedAt = Date.parse(moved.last_active)
  assert.ok(movedAt >= before, `last_active moved to the request time (${moved.last_active})`)
  assert.ok(movedAt <= clock.now())
  assert.equal(moved.created_at, first.created_at)

  clock.advance(59_000)
  const again = await currentSession(user)
  assert.equal(again.last_active, moved.last_active, 'not written again within a minute of the last write')

  clock.advance(2_000)
  const later = await currentSession(user)
  assert.ok(Date.parse(later.last_active) > movedAt)
})

test('a session idle for more than SESSION_TTL_DAYS is 401; a used one lives on', async () => {
  const idle = await timed.registerUser()
  const busy = await timed.registerUser()
  clock.advance(23 * HOUR)
  assert.equal((await busy.api.get(`${V2}/auth/me`)).status, 200)
  clock.advance(2 * HOUR) // idle: 25 h; busy: 2 h since its last request
  assertError(await idle.api.get(`${V2}/auth/me`), 401, 'unauthorized')
  assertError(await idle.api.get(`${V2}/sessions`), 401, 'unauthorized')
  assert.equal((await busy.api.get(`${V2}/auth/me`)).status, 200)
  // an expired session does not come back to life
  clock.advance(MINUTE)
  assertError(await idle.api.get(`${V2}/auth/me`), 401, 'unauthorized')
})

test('a session used every 20 hours stays valid past two days (sliding lifetime)', async () => {
  const user = await timed.registerUser()
  for (let i = 1; i <= 4; i++) {
    clock.advance(20 * HOUR)
    const res = await user.api.get(`${V2}/auth/me`)
    assert.equal(res.status, 200, `after ${i * 20} h`)
  }
  // 80 h after login, the session is still the same one
  const current = await currentSession(user)
  assert.ok(Date.parse(current.last_active) - Date.parse(current.created_at) >= 80 * HOUR)
  clock.advance(25 * HOUR)
  assertError(await user.api.get(`${V2}/auth/me`), 401, 'unauthorized')
})

test('expired sessions are not listed (nor counted)', async () => {
  const user = await timed.registerUser()
  const stale = await login(timed, user, 'stale')
  const fresh = await login(timed, user, 'fresh')
  assert.equal((await user.api.get(`${V2}/sessions`)).body.total, 3)

  clock.advance(20 * HOUR)
  assert.equal((await timed.api.as(fresh).get(`${V2}/auth/me`)).status, 200)
  clock.advance(5 * HOUR) // registration session and 'stale': idle 25 h; 'fresh': 5 h

  const res = await timed.api.as(fresh).get(`${V2}/sessions`)
  assert.equal(res.status, 200)
  assert.equal(res.body.total, 1)
  assert.equal(res.body.pages, 1)
  assert.deepEqual(
    res.body.items.map((s: any) => s.device),
    ['fresh'],
  )
  assertError(await timed.api.as(stale).get(`${V2}/auth/me`), 401, 'unauthorized')
  assertError(await user.api.get(`${V2}/auth/me`), 401, 'unauthorized')
})

test('opening a session records the user as active (last_activity in the admin view)', async () => {
  const admin = await server.createAdmin()
  const user = await server.registerUser()
  const res = await admin.api.get('/api/admin/users', { query: { q: user.username } })
  const listed = res.body.items.find((u: { user_id: number }) => u.user_id === user.id)
  assert.ok(listed)
  assert.match(listed.last_activity, /^\d{4}-\d\d-\d\dT/)
})

test('many requests at once, with many tokens: each is its own user; unknown and ended sessions are 401 at once', async () => {
  const users = await Promise.all(Array.from({ length: 8 }, () => server.registerUser()))
  const ended = await Promise.all(users.slice(0, 3).map((user) => login(server, user, 'ended')))
  await Promise.all(ended.map(async (token) => assert.equal((await server.api.as(token).post(`${V2}/auth/logout`)).status, 200)))
  // PostgreSQL reads the sessions of all the requests that arrive together with one query
  // (sessions/token-lookups.ts): every answer must still be the right user's
  const asked = [
    ...users.flatMap((user) => Array.from({ length: 4 }, () => ({ token: user.token, expect: user.id }))),
    ...ended.map((token) => ({ token, expect: null })),
    ...Array.from({ length: 3 }, (_, i) => ({ token: `unknown-${i}-${'x'.repeat(40)}`, expect: null })),
  ]
  const answers = await Promise.all(asked.map(({ token }) => server.api.as(token).get(`${V2}/auth/me`)))
  answers.forEach((res, i) => {
    const { expect } = asked[i]
    if (expect === null) assertError(res, 401, 'unauthorized')
    else {
      assert.equal(res.status, 200, res.text)
      assert.equal(res.body.data.user_id, expect)
    }
  })
  // a logout is seen by the very next request, while other requests keep the lookups busy
  for (const user of users.slice(3, 6)) {
    const token = await login(server, user, 'brief')
    const busy = users.map((other) => other.api.get(`${V2}/auth/me`))
    assert.equal((await server.api.as(token).get(`${V2}/auth/me`)).status, 200)
    assert.equal((await server.api.as(token).post(`${V2}/auth/logout`)).status, 200)
    const [after] = await Promise.all([server.api.as(token).get(`${V2}/auth/me`), ...busy])
    assertError(after, 401, 'unauthorized')
  }
})
