import assert from 'node:assert/strict'
import test from 'node:test'
import * as OTPAuth from 'otpauth'
import { resetTwoFactor } from '../../src/modules/auth/two-factor.js'
import { TestClock } from '../harness/clock.js'
import { captureLog } from '../harness/log-capture.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'

const V2 = '/api.v2/api'
const clock = new TestClock()
const log = captureLog('trace')
const server = await startTestServer({ clock, log: log.logger })

/** Every credential this file saw in clear: none may be in the database or the log. */
const seen = {
  secrets: new Set<string>(),
  codes: new Set<string>(),
  tickets: new Set<string>(),
  recovery: new Set<string>(),
  tokens: new Set<string>(),
}

/** The code of the authenticator app, RFC 6238, at the server's time (a new time step each call). */
function nextCode(secret: string): string {
  clock.advance(30_000)
  const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: clock.now(),
  })
  seen.codes.add(code)
  return code
}

async function withTwoFactor(s: TestServer = server, user?: TestUser) {
  const owner = user ?? (await s.registerUser())
  const setup = await owner.api.post(`${V2}/auth/2fa/setup`)
  assert.equal(setup.status, 200, setup.text)
  const secret: string = setup.body.data.secret
  seen.secrets.add(secret)
  const enabled = await owner.api.post(`${V2}/auth/2fa/enable`, { code: nextCode(secret) })
  assert.equal(enabled.status, 200, enabled.text)
  const recovery: string[] = enabled.body.data.recovery_codes
  for (const code of recovery) seen.recovery.add(code)
  return { user: owner, secret, recovery }
}

async function ticketFor(user: TestUser, s: TestServer = server, prefix = V2): Promise<string> {
  const res = await s.api.post(`${prefix}/auth/login`, { login: user.username, password: user.password })
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.data.next, 'totp')
  assert.equal(res.body.data.session_token, undefined)
  seen.tickets.add(res.body.data.ticket)
  return res.body.data.ticket
}

async function finish(ticket: string, code: string, s: TestServer = server, prefix = V2) {
  const res = await s.api.post(`${prefix}/auth/login/totp`, { ticket, code })
  if (res.status === 200) seen.tokens.add(res.body.data.session_token)
  return res
}

function assertRefused(res: { status: number; body: any }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body))
  assert.equal(res.body.success, false)
  assert.equal(res.body.error.code, code)
  assert.equal(res.body.data, undefined)
}

test('setup answers a new secret, its otpauth URL and a QR code; nothing changes until enable', async () => {
  const user = await server.registerUser()
  const res = await user.api.post(`${V2}/auth/2fa/setup`)
  assert.equal(res.status, 200)
  assert.deepEqual(Object.keys(res.body.data).sort(), ['otpauth_url', 'qr_svg', 'secret'])
  const { secret, otpauth_url: url, qr_svg: svg } = res.body.data
  seen.secrets.add(secret)
  assert.match(secret, /^[A-Z2-7]{32}$/, '160 bits, base32')
  const parsed = OTPAuth.URI.parse(url) as OTPAuth.TOTP
  assert.ok(parsed instanceof OTPAuth.TOTP)
  assert.equal(parsed.issuer, 'Tern')
  assert.equal(parsed.label, user.username)
  assert.equal(parsed.secret.base32, secret)
  assert.equal(parsed.digits, 6)
  assert.equal(parsed.period, 30)
  assert.match(svg, /^<svg[\s\S]*<\/svg>\s*$/)

  // not active yet: the password alone still signs in
  const login = await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  assert.equal(login.status, 200)
  assert.equal(typeof login.body.data.session_token, 'string')
  seen.tokens.add(login.body.data.session_token)
})

test('enable takes a current code of the pending secret and answers 10 single-use recovery codes, once', async () => {
  const user = await server.registerUser()
  assertRefused(await user.api.post(`${V2}/auth/2fa/enable`, { code: '123456' }), 409, 'conflict')
  const setup = await user.api.post(`${V2}/auth/2fa/setup`)
  const secret = setup.body.data.secret
  seen.secrets.add(secret)

  for (const code of ['000000', '12345', 'abcdef', ' ', '1234567']) {
    const wrong = await user.api.post(`${V2}/auth/2fa/enable`, { code })
    assertRefused(wrong, 400, 'validation_error')
  }
  assertRefused(await user.api.post(`${V2}/auth/2fa/enable`, {}), 400, 'validation_error')
  assertRefused(await user.api.post(`${V2}/auth/2fa/enable`, { code: 123456 }), 400, 'validation_error')
  assertRefused(await user.api.post(`${V2}/auth/2fa/enable`, { code: 'x'.repeat(33) }), 400, 'validation_error')
  // still off: the password signs in
  const before = await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  assert.equal(typeof before.body.data.session_token, 'string')
  seen.tokens.add(before.body.data.session_token)

  const res = await user.api.post(`${V2}/auth/2fa/enable`, { code: nextCode(secret) })
  assert.equal(res.status, 200)
  assert.equal(res.body.data.enabled, true)
  const codes: string[] = res.body.data.recovery_codes
  for (const code of codes) seen.recovery.add(code)
  assert.equal(codes.length, 10)
  assert.equal(new Set(codes).size, 10)
  for (const code of codes) assert.match(code, /^[a-z2-9]{5}-[a-z2-9]{5}$/)

  // on: setup and enable again are refused, and the secret is never shown again
  const again = await user.api.post(`${V2}/auth/2fa/setup`)
  assertRefused(again, 409, 'conflict')
  assert.ok(!again.text.includes(secret))
  assertRefused(await user.api.post(`${V2}/auth/2fa/enable`, { code: nextCode(secret) }), 409, 'conflict')
  const me = await user.api.get(`${V2}/auth/me`)
  assert.ok(!me.text.includes(secret) && !me.text.includes('two_factor'))
})

test('a restarted setup replaces the pending secret: the old one no longer enables', async () => {
  const user = await server.registerUser()
  const first = (await user.api.post(`${V2}/auth/2fa/setup`)).body.data.secret
  const second = (await user.api.post(`${V2}/auth/2fa/setup`)).body.data.secret
  seen.secrets.add(first).add(second)
  assert.notEqual(first, second)
  assertRefused(await user.api.post(`${V2}/auth/2fa/enable`, { code: nextCode(first) }), 400, 'validation_error')
  assert.equal((await user.api.post(`${V2}/auth/2fa/enable`, { code: nextCode(second) })).status, 200)
})

test('with 2FA on, login answers a ticket instead of a session, and the ticket with a code opens one', async () => {
  const { user, secret } = await withTwoFactor()
  const ticket = await ticketFor(user)
  assert.match(ticket, /^[A-Za-z0-9_-]{43}$/)
  // a ticket is no session
  assertRefused(await server.api.as(ticket).get(`${V2}/auth/me`), 401, 'unauthorized')

  const res = await finish(ticket, nextCode(secret))
  assert.equal(res.status, 200)
  assert.deepEqual(Object.keys(res.body.data).sort(), ['session_token', 'user'])
  assert.equal(res.body.data.user.user_id, user.id)
  const me = await server.api.as(res.body.data.session_token).get(`${V2}/auth/me`)
  assert.equal(me.status, 200)
  assert.equal(me.body.data.username, user.username)

  const list = await server.api.as(res.body.data.session_token).get(`${V2}/sessions`)
  const current = list.body.items.find((s: any) => s.is_current)
  assert.equal(current.method, 'password')
  assert.ok(list.body.items.every((s: any) => s.method === 'password'))
})

test('a wrong password never reaches the second step', async () => {
  const { user } = await withTwoFactor()
  const res = await server.api.post(`${V2}/auth/login`, { login: user.username, password: 'wrong password' })
  assertRefused(res, 401, 'unauthorized')
})

test('a TOTP code works once: the same code again is refused, a later one is accepted', async () => {
  const { user, secret } = await withTwoFactor()
  const code = nextCode(secret)
  assert.equal((await finish(await ticketFor(user), code)).status, 200)
  const ticket = await ticketFor(user)
  assertRefused(await finish(ticket, code), 401, 'unauthorized')
  // positive control: the same ticket takes the next code
  assert.equal((await finish(ticket, nextCode(secret))).status, 200)
})

test('a code of an earlier time step than one already used is refused', async () => {
  const { user, secret } = await withTwoFactor()
  clock.advance(30_000)
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 })
  const now = clock.now()
  const later = totp.generate({ timestamp: now + 30_000 })
  const earlier = totp.generate({ timestamp: now })
  seen.codes.add(later).add(earlier)
  assert.equal((await finish(await ticketFor(user), later)).status, 200)
  assertRefused(await finish(await ticketFor(user), earlier), 401, 'unauthorized')
})

test('codes outside the one-step window are refused', async () => {
  const { user, secret } = await withTwoFactor()
  clock.advance(30_000)
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 })
  const ticket = await ticketFor(user)
  for (const offset of [-120_000, 120_000]) {
    const code = totp.generate({ timestamp: clock.now() + offset })
    seen.codes.add(code)
    assertRefused(await finish(ticket, code), 401, 'unauthorized')
  }
  assert.equal((await finish(ticket, nextCode(secret))).status, 200)
})

test('a recovery code finishes a login once; another one still works', async () => {
  const { user, recovery } = await withTwoFactor()
  const first = await finish(await ticketFor(user), recovery[0])
  assert.equal(first.status, 200)
  assertRefused(await finish(await ticketFor(user), recovery[0]), 401, 'unauthorized')
  // written without the dash, in capitals, with spaces: the same code
  const spelled = ` ${recovery[1].replace('-', '').toUpperCase()} `
  assert.equal((await finish(await ticketFor(user), spelled)).status, 200)
  // another user's recovery code is no code of mine
  const other = await withTwoFactor()
  assertRefused(await finish(await ticketFor(user), other.recovery[0]), 401, 'unauthorized')
  assert.equal((await finish(await ticketFor(other.user), other.recovery[0])).status, 200)
})

test('a ticket opens one session: used once, it is dead even with a fresh code', async () => {
  const { user, secret } = await withTwoFactor()
  const ticket = await ticketFor(user)
  assert.equal((await finish(ticket, nextCode(secret))).status, 200)
  const again = await finish(ticket, nextCode(secret))
  assertRefused(again, 401, 'unauthorized')
  assert.match(again.body.error.message, /sign in again/)
})

test('two finishes of one ticket at once open one session', async () => {
  const { user, secret, recovery } = await withTwoFactor()
  const ticket = await ticketFor(user)
  const results = await Promise.all([finish(ticket, nextCode(secret)), finish(ticket, recovery[2]), finish(ticket, recovery[3])])
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 401, 401])
  // the losers' recovery codes were given back (or never taken): each still works once
  const unused = [recovery[2], recovery[3]].filter((_, i) => results[i + 1].status !== 200)
  for (const code of unused) assert.equal((await finish(await ticketFor(user), code)).status, 200)
})

test('five wrong codes end a ticket; the right code is refused after that', async () => {
  const { user, secret } = await withTwoFactor()
  const ticket = await ticketFor(user)
  for (let i = 0; i < 5; i++) assertRefused(await finish(ticket, String(100000 + i)), 401, 'unauthorized')
  const code = nextCode(secret)
  const dead = await finish(ticket, code)
  assertRefused(dead, 401, 'unauthorized')
  assert.match(dead.body.error.message, /Too many wrong codes/)
  // positive control: the same code, unused, finishes a new ticket
  assert.equal((await finish(await ticketFor(user), code)).status, 200)
})

test('a ticket expires after 5 minutes', async () => {
  const { user, secret } = await withTwoFactor()
  const early = await ticketFor(user)
  const late = await ticketFor(user)
  clock.advance(4 * 60_000)
  assert.equal((await finish(early, nextCode(secret))).status, 200, 'at 4:30')
  clock.advance(30_000)
  assertRefused(await finish(late, nextCode(secret)), 401, 'unauthorized')
})

test('unknown, malformed and missing tickets and codes are refused in the envelope', async () => {
  const { user, secret } = await withTwoFactor()
  const code = nextCode(secret)
  for (const ticket of ['x'.repeat(43), 'short', '../../etc/passwd', '__proto__', 'é'.repeat(43)]) {
    assertRefused(await finish(ticket, code), 401, 'unauthorized')
  }
  assertRefused(await server.api.post(`${V2}/auth/login/totp`, { ticket: 'x'.repeat(43) }), 400, 'validation_error')
  assertRefused(await server.api.post(`${V2}/auth/login/totp`, { code }), 400, 'validation_error')
  assertRefused(await server.api.post(`${V2}/auth/login/totp`, { ticket: 'x'.repeat(129), code }), 400, 'validation_error')
  assertRefused(await server.api.post(`${V2}/auth/login/totp`, { ticket: ['a'], code }), 400, 'validation_error')
  const ticket = await ticketFor(user)
  for (const bad of ['', '12345', '1234567', 'abcdefghijk', '00000a', '__proto__']) {
    const res = await finish(ticket, bad)
    assert.ok([400, 401].includes(res.status), `${JSON.stringify(bad)}: ${res.status}`)
    assert.equal(res.body.success, false)
  }
  // a session token is no ticket
  assertRefused(await finish(user.token, code), 401, 'unauthorized')
})

test('the 2FA endpoints need a session', async () => {
  for (const path of ['setup', 'enable', 'disable']) {
    assertRefused(await server.api.post(`${V2}/auth/2fa/${path}`, { code: '123456' }), 401, 'unauthorized')
    assertRefused(await server.api.as('x'.repeat(43)).post(`${V2}/auth/2fa/${path}`, { code: '123456' }), 401, 'unauthorized')
  }
})

test('disable takes a current code or a recovery code; then the password alone signs in again', async () => {
  const { user, secret } = await withTwoFactor()
  assertRefused(await user.api.post(`${V2}/auth/2fa/disable`, { code: '000000' }), 400, 'validation_error')
  assertRefused(await user.api.post(`${V2}/auth/2fa/disable`, { code: 'aaaaa-aaaaa' }), 400, 'validation_error')
  // still on
  await ticketFor(user)
  const res = await user.api.post(`${V2}/auth/2fa/disable`, { code: nextCode(secret) })
  assert.equal(res.status, 200)
  assert.deepEqual(res.body.data, { enabled: false })
  const login = await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  assert.equal(typeof login.body.data.session_token, 'string')
  seen.tokens.add(login.body.data.session_token)
  assertRefused(await user.api.post(`${V2}/auth/2fa/disable`, { code: nextCode(secret) }), 409, 'conflict')

  const other = await withTwoFactor()
  assert.equal((await other.user.api.post(`${V2}/auth/2fa/disable`, { code: other.recovery[4] })).status, 200)
  // the old recovery codes are gone with it: turned on again, they do not work
  const again = await withTwoFactor(server, other.user)
  assertRefused(await finish(await ticketFor(other.user), other.recovery[5]), 401, 'unauthorized')
  assert.equal((await finish(await ticketFor(other.user), again.recovery[5])).status, 200)
})

test('a login waiting for its code dies when 2FA is turned off meanwhile', async () => {
  const { user, secret } = await withTwoFactor()
  const ticket = await ticketFor(user)
  assert.equal((await user.api.post(`${V2}/auth/2fa/disable`, { code: nextCode(secret) })).status, 200)
  assertRefused(await finish(ticket, nextCode(secret)), 401, 'unauthorized')
})

test('resetTwoFactor (the admin reset) turns 2FA off inside the caller transaction, and says whether it was on', async () => {
  const { user, secret, recovery } = await withTwoFactor()
  const ticket = await ticketFor(user)
  const wasOn = await server.ctx.db.transaction().execute((trx) => resetTwoFactor(trx, user.id))
  assert.equal(wasOn, true)
  assert.equal(await server.ctx.db.transaction().execute((trx) => resetTwoFactor(trx, user.id)), false)
  const row = await server.ctx.db
    .selectFrom('users')
    .select(['two_factor_secret', 'two_factor_pending_secret'])
    .where('id', '=', user.id)
    .executeTakeFirstOrThrow()
  assert.deepEqual(row, { two_factor_secret: null, two_factor_pending_secret: null })
  const codes = await server.ctx.db.selectFrom('two_factor_recovery_codes').select('id').where('user_id', '=', user.id).execute()
  assert.equal(codes.length, 0)
  assertRefused(await finish(ticket, nextCode(secret)), 401, 'unauthorized')
  assertRefused(await finish(ticket, recovery[0]), 401, 'unauthorized')
  const login = await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  assert.equal(typeof login.body.data.session_token, 'string')
  seen.tokens.add(login.body.data.session_token)

  // a rolled-back transaction leaves 2FA on
  const other = await withTwoFactor()
  await assert.rejects(
    server.ctx.db.transaction().execute(async (trx) => {
      assert.equal(await resetTwoFactor(trx, other.user.id), true)
      throw new Error('rollback')
    }),
    /rollback/,
  )
  await ticketFor(other.user)
})

test('the legacy mount: /api/auth/2fa/* and a two-step /api/auth/login that sets the cookie at the end', async () => {
  const user = await server.registerUser()
  const setup = await user.api.post('/api/auth/2fa/setup')
  assert.equal(setup.status, 200)
  const secret = setup.body.data.secret
  seen.secrets.add(secret)
  const enabled = await user.api.post('/api/auth/2fa/enable', { code: nextCode(secret) })
  assert.equal(enabled.status, 200)
  for (const code of enabled.body.data.recovery_codes) seen.recovery.add(code)
  const first = await server.api.post('/api/auth/login', { login: user.username, password: user.password })
  assert.equal(first.body.data.next, 'totp')
  assert.equal(first.headers.get('set-cookie'), null, 'no cookie before the second step')
  seen.tickets.add(first.body.data.ticket)
  const done = await finish(first.body.data.ticket, nextCode(secret), server, '/api')
  assert.equal(done.status, 200)
  assert.match(done.headers.get('set-cookie') ?? '', /^tern_session=/)
})

test('sessions list how each was opened; a session finished by a code is two_factor_verified', async () => {
  const { user, secret } = await withTwoFactor()
  const done = await finish(await ticketFor(user), nextCode(secret))
  const rows = await server.ctx.db
    .selectFrom('user_sessions')
    .select(['method', 'two_factor_verified'])
    .where('user_id', '=', user.id)
    .orderBy('id')
    .execute()
  assert.deepEqual(rows, [
    { method: 'password', two_factor_verified: 0 },
    { method: 'password', two_factor_verified: 1 },
  ])
  const list = await server.api.as(done.body.data.session_token).get(`${V2}/sessions`)
  assert.equal(list.status, 200)
  for (const item of list.body.items) assert.equal(item.method, 'password')
})

test('ADMIN_REQUIRE_2FA: an admin without a second factor in this session gets 403 from admin endpoints', async () => {
  const strict = await startTestServer({ clock, env: { ADMIN_REQUIRE_2FA: 'true' } })
  const admin = await strict.createAdmin()
  const refused = await admin.api.get('/api/admin/users')
  assertRefused(refused, 403, 'forbidden')
  assert.match(refused.body.error.message, /Two-factor authentication is required/)
  // the admin turns 2FA on (their own endpoints need no second factor), signs in again with a code
  const setup = await admin.api.post(`${V2}/auth/2fa/setup`)
  const secret = setup.body.data.secret
  seen.secrets.add(secret)
  const code = () => nextCode(secret)
  assert.equal((await admin.api.post(`${V2}/auth/2fa/enable`, { code: code() })).status, 200)
  assertRefused(await admin.api.get('/api/admin/users'), 403, 'forbidden')
  const ticket = (await strict.api.post(`${V2}/auth/login`, { login: admin.username, password: admin.password })).body.data.ticket
  const done = await finish(ticket, code(), strict)
  assert.equal(done.status, 200)
  const allowed = await strict.api.as(done.body.data.session_token).get('/api/admin/users')
  assert.equal(allowed.status, 200, allowed.text)

  // a second factor does not make anyone an admin
  const { user } = await withTwoFactor(strict)
  const plain = await strict.api.as(user.token).get('/api/admin/users')
  assertRefused(plain, 403, 'forbidden')
  assert.match(plain.body.error.message, /Administrators only/)
})

test('without ADMIN_REQUIRE_2FA an admin signed in by password alone is let in (positive control)', async () => {
  const admin = await server.createAdmin()
  seen.tokens.add(admin.token)
  assert.equal((await admin.api.get('/api/admin/users')).status, 200)
})

test('no TOTP secret, code, recovery code, ticket or session token is in the database or the log in clear', async () => {
  assert.ok(seen.secrets.size > 10 && seen.codes.size > 10 && seen.tickets.size > 10 && seen.recovery.size > 50 && seen.tokens.size > 10)
  const tables = await server.ctx.db.introspection.getTables()
  assert.ok(tables.some((t) => t.name === 'login_tickets') && tables.some((t) => t.name === 'two_factor_recovery_codes'))
  let dump = ''
  for (const table of tables) {
    const rows = await server.ctx.db
      .selectFrom(table.name as any)
      .selectAll()
      .execute()
    dump += JSON.stringify(rows)
  }
  const logText = log.text()
  // positive controls: both were read, and hold what was done
  assert.ok(dump.includes('"v1.'), 'sealed secrets are in the dump')
  assert.ok(logText.includes('/auth/login/totp'), 'the requests are in the log')
  const loose = (value: string) => new RegExp(`(?<![A-Za-z0-9])${value.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}(?![A-Za-z0-9])`)
  for (const [kind, values] of Object.entries(seen)) {
    for (const value of values) {
      const variants = kind === 'recovery' ? [value, value.replace('-', '')] : [value]
      for (const v of variants) {
        assert.ok(!loose(v).test(dump), `${kind} ${v} is in the database`)
        assert.ok(!loose(v).test(logText), `${kind} ${v} is in the log`)
      }
    }
  }
})
