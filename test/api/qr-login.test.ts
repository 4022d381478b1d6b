import assert from 'node:assert/strict'
import test from 'node:test'
import * as OTPAuth from 'otpauth'
import { TestClock } from '../harness/clock.js'
import { captureLog } from '../harness/log-capture.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'

const V2 = '/api.v2/api'
const clock = new TestClock()
const log = captureLog('trace')
const server = await startTestServer({ clock, log: log.logger, env: { QR_GENERATE_RATE_LIMIT: '100000/60' } })

/** every QR token and secret and session token this file saw in clear: none may be in the database or the log */
const seen = { qr: new Set<string>(), tokens: new Set<string>() }
/** each code's device secret, by its token: the new device's own memory */
const secrets = new Map<string, string>()

const NEW_DEVICE = { 'user-agent': 'TernDesktop/2.1 (Linux)' }

async function generate(s: TestServer = server, prefix = V2, body: Record<string, unknown> = { device: 'Desktop app on Linux' }) {
  const res = await s.api.post(`${prefix}/auth/qr/generate`, body, { headers: NEW_DEVICE })
  assert.equal(res.status, 200, res.text)
  remember(res.body.data)
  return res.body.data as { token: string; secret: string; qr_url: string; qr_svg: string; expires_at: string }
}

function remember(code: { token: string; secret: string }) {
  seen.qr.add(code.token)
  seen.qr.add(code.secret)
  secrets.set(code.token, code.secret)
}

/** A step; the new device's steps carry the code's secret unless the body names one. */
const qr = (stepName: string, body: Record<string, unknown>, client = server.api, prefix = V2) => {
  const device = stepName === 'status' || stepName === 'login' || stepName === 'decline'
  const secret = typeof body.token === 'string' ? secrets.get(body.token) : undefined
  return client.post(`${prefix}/auth/qr/${stepName}`, device && secret && !('secret' in body) ? { ...body, secret } : body, {
    headers: NEW_DEVICE,
  })
}

async function member(s: TestServer = server): Promise<TestUser> {
  const user = await s.registerUser()
  seen.tokens.add(user.token)
  return user
}

function assertRefused(res: { status: number; body: any; text: string }, status: number, code: string) {
  assert.equal(res.status, status, res.text)
  assert.equal(res.body.success, false)
  assert.equal(res.body.error.code, code)
  assert.ok(!res.text.includes('session_token'), 'no session in the answer')
}

async function sessionCount(userId: number) {
  const rows = await server.ctx.db.selectFrom('user_sessions').select('id').where('user_id', '=', userId).execute()
  return rows.length
}

/** generate, scanned and approved by `user`: the token, ready for login */
async function approvedBy(user: TestUser) {
  const { token } = await generate()
  assert.equal((await qr('request', { token }, user.api)).status, 200)
  assert.equal((await qr('authorize', { token }, user.api)).status, 200)
  return token
}

test('generate answers a 256-bit token, its page URL, the code as SVG and when it expires (2 minutes)', async () => {
  const before = clock.now()
  const code = await generate()
  assert.match(code.token, /^[A-Za-z0-9_-]{43}$/)
  assert.match(code.secret, /^[A-Za-z0-9_-]{43}$/)
  assert.notEqual(code.secret, code.token)
  assert.ok(!code.qr_url.includes(code.secret) && !code.qr_svg.includes(code.secret), 'the picture does not carry the secret')
  assert.equal(code.qr_url, `${server.ctx.config.publicBaseUrl}/qr/${code.token}`)
  assert.match(code.qr_svg, /^<svg[\s\S]*<\/svg>\s*$/)
  const expires = Date.parse(code.expires_at)
  assert.ok(expires >= before + 120_000 && expires <= clock.now() + 120_000, code.expires_at)
  const again = await generate()
  assert.notEqual(again.token, code.token)
  const status = await qr('status', { token: code.token })
  assert.deepEqual(status.body.data, { status: 'pending', expires_at: code.expires_at, account: null })
})

test('the whole flow: scanned, approved, and the new device gets one session (method qr) for the approving user', async () => {
  const alice = await member()
  const { token } = await generate()

  const scanned = await qr('request', { token }, alice.api)
  assert.equal(scanned.status, 200, scanned.text)
  assert.deepEqual(Object.keys(scanned.body.data).sort(), [
    'device',
    'expires_at',
    'ip_address',
    'place',
    'requested_at',
    'status',
    'user_agent',
  ])
  assert.equal(scanned.body.data.status, 'scanned')
  assert.equal(scanned.body.data.device, 'Desktop app on Linux')
  assert.equal(scanned.body.data.user_agent, NEW_DEVICE['user-agent'])
  assert.equal(scanned.body.data.ip_address, '127.0.0.1')
  assert.equal(scanned.body.data.place, 'this computer')
  const seenByDevice = (await qr('status', { token })).body.data
  assert.equal(seenByDevice.status, 'scanned')
  // the new device sees which account scanned its code
  assert.deepEqual(seenByDevice.account, { user_id: alice.id, username: alice.username, display_name: seenByDevice.account.display_name })
  // scanning again shows the same
  assert.equal((await qr('request', { token }, alice.api)).body.data.status, 'scanned')

  const approved = await qr('authorize', { token }, alice.api)
  assert.equal(approved.status, 200, approved.text)
  assert.equal(approved.body.data.status, 'authorized')
  assert.equal((await qr('status', { token })).body.data.status, 'authorized')
  // scanning again after approving shows it approved
  assert.equal((await qr('request', { token }, alice.api)).body.data.status, 'authorized')

  const before = await sessionCount(alice.id)
  const login = await qr('login', { token })
  assert.equal(login.status, 200, login.text)
  assert.deepEqual(Object.keys(login.body.data).sort(), ['session_token', 'user'])
  const sessionToken = login.body.data.session_token
  seen.tokens.add(sessionToken)
  assert.equal(login.body.data.user.user_id, alice.id)
  assert.equal(await sessionCount(alice.id), before + 1)

  const me = await server.api.as(sessionToken).get(`${V2}/auth/me`)
  assert.equal(me.status, 200)
  assert.equal(me.body.data.username, alice.username)
  assert.equal((await qr('status', { token })).body.data.status, 'used')

  // the sessions list says how it was opened
  const list = await alice.api.get(`${V2}/sessions`)
  const methods = list.body.items.map((s: any) => s.method).sort()
  assert.deepEqual(methods, ['password', 'qr'])
  const newSession = list.body.items.find((s: any) => s.method === 'qr')
  assert.equal(newSession.device, 'Desktop app on Linux')

  // once only
  assertRefused(await qr('login', { token }), 409, 'conflict')
  assert.equal(await sessionCount(alice.id), before + 1)
})

test('the alias POST auth/qr {step} and the legacy /api/auth mount do the same', async () => {
  const bob = await member()
  const gen = await server.api.post(`${V2}/auth/qr`, { step: 'generate', device: 'Tablet' })
  assert.equal(gen.status, 200, gen.text)
  const token = gen.body.data.token
  const secret = gen.body.data.secret
  remember(gen.body.data)
  assert.equal((await server.api.post(`${V2}/auth/qr`, { step: 'status', token, secret })).body.data.status, 'pending')
  assertRefused(await server.api.post(`${V2}/auth/qr`, { step: 'status', token }), 400, 'validation_error')
  const scanned = await bob.api.post(`${V2}/auth/qr`, { step: 'request', token })
  assert.equal(scanned.body.data.device, 'Tablet')
  assert.equal((await bob.api.post(`${V2}/auth/qr`, { step: 'authorize', token })).body.data.status, 'authorized')
  assertRefused(await server.api.post(`${V2}/auth/qr`, { step: 'login', token, secret: 'S'.repeat(43) }), 404, 'not_found')
  const login = await server.api.post(`${V2}/auth/qr`, { step: 'login', token, secret })
  assert.equal(login.status, 200, login.text)
  seen.tokens.add(login.body.data.session_token)
  assert.equal(login.body.data.user.user_id, bob.id)

  // legacy mount, paths and alias; its login also opens the V1 cookie session
  const legacy = await generate(server, '/api')
  assert.equal((await qr('request', { token: legacy.token }, bob.api, '/api')).status, 200)
  assert.equal((await bob.api.post('/api/auth/qr', { step: 'authorize', token: legacy.token })).status, 200)
  const legacyLogin = await qr('login', { token: legacy.token }, server.api, '/api')
  assert.equal(legacyLogin.status, 200, legacyLogin.text)
  seen.tokens.add(legacyLogin.body.data.session_token)
  assert.match(legacyLogin.headers.get('set-cookie') ?? '', /tern_session=.*HttpOnly/i)
})

test('status long-polls: a wait ends as soon as the code is scanned, and otherwise after the wait', async () => {
  const carol = await member()
  const { token } = await generate()
  // positive control: nothing happens, the wait runs out
  let started = Date.now()
  const idle = await qr('status', { token, wait: 1 })
  assert.equal(idle.body.data.status, 'pending')
  assert.ok(Date.now() - started >= 900, 'waited about a second')

  started = Date.now()
  const waiting = qr('status', { token, wait: 20 })
  await new Promise((resolve) => setTimeout(resolve, 300))
  await qr('request', { token }, carol.api)
  const woke = await waiting
  assert.equal(woke.body.data.status, 'scanned')
  assert.ok(Date.now() - started < 1500, `woken at once (${Date.now() - started} ms)`)

  // since: the status the device knows; authorize wakes the next wait
  started = Date.now()
  const next = qr('status', { token, wait: 20, since: 'scanned' })
  await new Promise((resolve) => setTimeout(resolve, 200))
  await qr('authorize', { token }, carol.api)
  assert.equal((await next).body.data.status, 'authorized')
  assert.ok(Date.now() - started < 1500)
  // a status other than `since` answers at once
  started = Date.now()
  assert.equal((await qr('status', { token, wait: 20, since: 'pending' })).body.data.status, 'authorized')
  assert.ok(Date.now() - started < 500)
})

test('another instance on the same database sees the change by reading the row again (short poll)', async () => {
  const other = await startTestServer({ database: server.database, clock, env: { QR_GENERATE_RATE_LIMIT: '100000/60' } })
  const dave = await member()
  const { token } = await generate()
  const started = Date.now()
  const waiting = other.api.post(`${V2}/auth/qr/status`, { token, secret: secrets.get(token), wait: 20 })
  await new Promise((resolve) => setTimeout(resolve, 300))
  await qr('request', { token }, dave.api)
  const res = await waiting
  assert.equal(res.body.data.status, 'scanned')
  assert.ok(Date.now() - started < 2500, `${Date.now() - started} ms`)
})

test('a code lives 2 minutes: then it is expired for every step, and its page is gone', async () => {
  const erin = await member()
  const { token } = await generate()
  assert.equal((await qr('request', { token }, erin.api)).status, 200)
  assert.equal((await qr('authorize', { token }, erin.api)).status, 200)
  assert.equal((await server.api.get(`/qr/${token}`)).status, 200, 'positive control: the page works before')
  clock.advance(120_001)
  assert.equal((await qr('status', { token })).body.data.status, 'expired')
  const before = await sessionCount(erin.id)
  assertRefused(await qr('login', { token }), 409, 'conflict')
  assertRefused(await qr('request', { token }, erin.api), 409, 'conflict')
  assertRefused(await qr('authorize', { token }, erin.api), 409, 'conflict')
  assert.equal(await sessionCount(erin.id), before)
  assert.equal((await server.api.get(`/qr/${token}`)).status, 404)

  const fresh = await generate()
  clock.advance(120_001)
  assertRefused(await qr('request', { token: fresh.token }, erin.api), 409, 'conflict')
  // a long poll on an expired code answers at once
  const started = Date.now()
  assert.equal((await qr('status', { token: fresh.token, wait: 20 })).body.data.status, 'expired')
  assert.ok(Date.now() - started < 1000)
})

test('refusals: unknown token, no login, not scanned, someone else’s code, not approved yet — and no session', async () => {
  const frank = await member()
  const grace = await member()
  const unknown = 'A'.repeat(43)
  for (const name of ['status', 'login', 'decline'])
    assertRefused(await qr(name, { token: unknown, secret: 'S'.repeat(43) }), 404, 'not_found')
  for (const name of ['request', 'authorize']) assertRefused(await qr(name, { token: unknown }, frank.api), 404, 'not_found')
  assertRefused(await qr('login', { token: 'short', secret: 'S'.repeat(43) }), 404, 'not_found')

  const { token } = await generate()
  // the signed-in steps need a session
  assertRefused(await qr('request', { token }), 401, 'unauthorized')
  assertRefused(await qr('authorize', { token }), 401, 'unauthorized')
  assertRefused(await server.api.post(`${V2}/auth/qr`, { step: 'authorize', token }), 401, 'unauthorized')
  assertRefused(await qr('request', { token }, server.api.as('not-a-session-token-at-all-xxxxxxxx')), 401, 'unauthorized')
  // not scanned yet: approving blind is refused
  assertRefused(await qr('authorize', { token }, frank.api), 409, 'conflict')
  // not approved yet
  assertRefused(await qr('login', { token }), 409, 'conflict')
  assert.equal((await qr('status', { token })).body.data.status, 'pending')

  assert.equal((await qr('request', { token }, frank.api)).status, 200)
  assertRefused(await qr('login', { token }), 409, 'conflict')
  // grace does not approve a code frank scanned (she would have to scan it, and the device would see her)
  assertRefused(await qr('authorize', { token }, grace.api), 409, 'conflict')
  assert.equal((await qr('status', { token })).body.data.status, 'scanned')
  assert.equal((await qr('status', { token })).body.data.account.user_id, frank.id)
  const [frankBefore, graceBefore] = [await sessionCount(frank.id), await sessionCount(grace.id)]
  assertRefused(await qr('login', { token }), 409, 'conflict')
  assert.equal(await sessionCount(frank.id), frankBefore)

  // positive control: frank approves, and then the same login works
  assert.equal((await qr('authorize', { token }, frank.api)).status, 200)
  const login = await qr('login', { token })
  assert.equal(login.status, 200)
  seen.tokens.add(login.body.data.session_token)
  assert.equal(login.body.data.user.user_id, frank.id)
  assert.equal(await sessionCount(grace.id), graceBefore)
})

test('the picture alone is useless: without the device secret, status, login and decline answer as for an unknown code', async () => {
  const owner = await member()
  const { token } = await generate()
  const thief = server.api
  assert.equal((await qr('request', { token }, owner.api)).status, 200)
  assert.equal((await qr('authorize', { token }, owner.api)).status, 200)
  const before = await sessionCount(owner.id)
  // whoever read the code (a screen share, a photo) has the token, not the secret
  for (const secret of ['S'.repeat(43), (await generate()).secret]) {
    assertRefused(await thief.post(`${V2}/auth/qr/status`, { token, secret, wait: 0 }), 404, 'not_found')
    assertRefused(await thief.post(`${V2}/auth/qr/login`, { token, secret }), 404, 'not_found')
    assertRefused(await thief.post(`${V2}/auth/qr/decline`, { token, secret }), 404, 'not_found')
  }
  assert.equal(await sessionCount(owner.id), before, 'the thief opened no session')
  // positive control: the device that generated the code signs in with it
  const login = await qr('login', { token })
  assert.equal(login.status, 200, login.text)
  seen.tokens.add(login.body.data.session_token)
  assert.equal(login.body.data.user.user_id, owner.id)
})

test('a stranger who scans the code first does not lock its owner out: the owner scans it again and takes it over', async () => {
  const owner = await member()
  const stranger = await member()
  const { token } = await generate()
  assert.equal((await qr('request', { token }, stranger.api)).status, 200)
  assert.equal((await qr('status', { token })).body.data.account.user_id, stranger.id)
  // the owner scans the same code: it is theirs now, and the stranger can no longer approve it
  const taken = await qr('request', { token }, owner.api)
  assert.equal(taken.status, 200, taken.text)
  assert.equal(taken.body.data.status, 'scanned')
  assertRefused(await qr('authorize', { token }, stranger.api), 409, 'conflict')
  assert.equal((await qr('authorize', { token }, owner.api)).status, 200)
  const status = (await qr('status', { token })).body.data
  assert.equal(status.status, 'authorized')
  assert.equal(status.account.user_id, owner.id)
  // once approved, nobody else takes it over
  assertRefused(await qr('request', { token }, stranger.api), 409, 'conflict')
  const login = await qr('login', { token })
  seen.tokens.add(login.body.data.session_token)
  assert.equal(login.body.data.user.user_id, owner.id)
})

test('a code a stranger approved is seen as theirs by the new device, which declines it; then its owner approves it', async () => {
  const owner = await member()
  const stranger = await member()
  const { token } = await generate()
  assert.equal((await qr('request', { token }, stranger.api)).status, 200)
  assert.equal((await qr('authorize', { token }, stranger.api)).status, 200)
  // the owner's scan is refused now, but the device sees whose approval it is before signing in
  assertRefused(await qr('request', { token }, owner.api), 409, 'conflict')
  const seenByDevice = (await qr('status', { token })).body.data
  assert.equal(seenByDevice.status, 'authorized')
  assert.equal(seenByDevice.account.username, stranger.username)
  const strangerSessions = await sessionCount(stranger.id)
  const declined = await qr('decline', { token })
  assert.equal(declined.status, 200, declined.text)
  assert.equal(declined.body.data.status, 'pending')
  assert.equal((await qr('status', { token })).body.data.account, null)
  // the stranger's approval is gone: no login until someone approves again
  assertRefused(await qr('login', { token }), 409, 'conflict')
  assert.equal((await qr('request', { token }, owner.api)).status, 200)
  assert.equal((await qr('authorize', { token }, owner.api)).status, 200)
  const login = await qr('login', { token })
  assert.equal(login.status, 200, login.text)
  seen.tokens.add(login.body.data.session_token)
  assert.equal(login.body.data.user.user_id, owner.id)
  assert.equal(await sessionCount(stranger.id), strangerSessions, 'no session of the stranger was opened')
})

test('bad input is a 400 in the envelope', async () => {
  const { token } = await generate()
  const cases: Array<[string, unknown]> = [
    ['status', { token, wait: 26 }],
    ['status', { token, wait: -1 }],
    ['status', { token, wait: 'x' }],
    ['status', { token, since: 'nonsense' }],
    ['status', {}],
    ['status', { token }],
    ['status', { token, secret: 'short' }],
    ['login', { token }],
    ['decline', { token }],
    ['status', { token: 42 }],
    ['status', { token: 'x'.repeat(129) }],
    ['generate', { device: 'x'.repeat(129) }],
    ['generate', { device: 5 }],
  ]
  for (const [name, body] of cases) {
    const res = await server.api.post(`${V2}/auth/qr/${name}`, body)
    assertRefused(res, 400, 'validation_error')
  }
  assertRefused(await server.api.post(`${V2}/auth/qr`, { step: 'nope', token }), 400, 'validation_error')
  assertRefused(await server.api.post(`${V2}/auth/qr`, { step: 'login' }), 400, 'validation_error')
  assertRefused(await server.api.post(`${V2}/auth/qr`, { token }), 400, 'validation_error')
  assertRefused(
    await server.api.post(`${V2}/auth/qr/status`, undefined, { raw: '{"token":', headers: { 'content-type': 'application/json' } }),
    400,
    'validation_error',
  )
  // positive controls; unknown fields are dropped, and generate needs no body
  assert.equal(
    (await server.api.post(`${V2}/auth/qr/status`, { token, secret: secrets.get(token), wait: 0, since: 'pending', extra: 1 })).status,
    200,
  )
  const bare = await server.api.post(`${V2}/auth/qr/generate`)
  assert.equal(bare.status, 200, bare.text)
  remember(bare.body.data)
})

test('with two-factor on, the approval of a signed-in device is enough: no ticket, a session', async () => {
  const henry = await member()
  const secret = (await henry.api.post(`${V2}/auth/2fa/setup`)).body.data.secret
  clock.advance(30_000)
  const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: clock.now() })
  assert.equal((await henry.api.post(`${V2}/auth/2fa/enable`, { code })).status, 200)
  // positive control: a password login now needs the second step
  const password = await server.api.post(`${V2}/auth/login`, { login: henry.username, password: henry.password })
  assert.equal(password.body.data.next, 'totp')

  const token = await approvedBy(henry)
  const login = await qr('login', { token })
  assert.equal(login.status, 200, login.text)
  assert.equal(login.body.data.next, undefined)
  seen.tokens.add(login.body.data.session_token)
  const row = await server.ctx.db
    .selectFrom('user_sessions')
    .select(['method', 'two_factor_verified'])
    .where('user_id', '=', henry.id)
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow()
  // the approving session was opened by registration (no second factor), so this one was not either
  assert.deepEqual(row, { method: 'qr', two_factor_verified: 0 })
})

test('a suspended account gets no session from an approved code', async () => {
  const ivan = await member()
  const token = await approvedBy(ivan)
  await server.ctx.db.updateTable('users').set({ is_active: 0 }).where('id', '=', ivan.id).execute()
  const before = await sessionCount(ivan.id)
  assertRefused(await qr('login', { token }), 401, 'unauthorized')
  assert.equal(await sessionCount(ivan.id), before)
})

test('the /qr/<token> page shows the code and what to do, without a script', async () => {
  const { token } = await generate()
  const res = await server.api.get(`/qr/${token}`)
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /text\/html/)
  assert.equal(res.headers.get('cache-control'), 'no-store')
  assert.match(res.text, /<svg[\s\S]*<\/svg>/)
  assert.match(res.text, /scan this code/i)
  assert.ok(!/<script/i.test(res.text), 'no script')
  assert.equal((await server.api.get(`/qr/${'B'.repeat(43)}`)).status, 404)
  assert.equal((await server.api.get('/qr/x')).status, 404)
  // once used, the page is gone
  const jane = await member()
  const used = await approvedBy(jane)
  const login = await qr('login', { token: used })
  seen.tokens.add(login.body.data.session_token)
  assert.equal((await server.api.get(`/qr/${used}`)).status, 404)
})

test('generate is rate limited per client IP (QR_GENERATE_RATE_LIMIT), the alias included', async () => {
  const limited = await startTestServer({ env: { QR_GENERATE_RATE_LIMIT: '3/60' } })
  for (let i = 0; i < 2; i++) assert.equal((await limited.api.post(`${V2}/auth/qr/generate`, {})).status, 200)
  assert.equal((await limited.api.post('/api/auth/qr', { step: 'generate' })).status, 200)
  const over = await limited.api.post(`${V2}/auth/qr/generate`, {})
  assertRefused(over, 429, 'rate_limited')
  assert.ok(Number(over.headers.get('retry-after')) > 0)
  assertRefused(await limited.api.post(`${V2}/auth/qr`, { step: 'generate' }), 429, 'rate_limited')
  // the other steps are not counted against it
  assertRefused(await limited.api.post(`${V2}/auth/qr/status`, { token: 'C'.repeat(43), secret: 'D'.repeat(43) }), 404, 'not_found')
})

test('no QR token or session token is in the database or the log in clear', async () => {
  assert.ok(seen.qr.size > 10 && seen.tokens.size > 5)
  const tables = await server.ctx.db.introspection.getTables()
  let dump = ''
  for (const table of tables)
    dump += JSON.stringify(
      await server.ctx.db
        .selectFrom(table.name as any)
        .selectAll()
        .execute(),
    )
  const logText = log.text()
  // positive controls: the rows and the requests are there
  assert.ok(dump.includes('Desktop app on Linux'), 'the QR rows are in the dump')
  assert.ok(logText.includes('/auth/qr/login') && logText.includes('/qr/[redacted]'), 'the requests are in the log')
  for (const [kind, values] of Object.entries(seen)) {
    for (const value of values) {
      assert.ok(!dump.includes(value), `${kind} ${value} is in the database`)
      assert.ok(!logText.includes(value), `${kind} ${value} is in the log`)
    }
  }
})
