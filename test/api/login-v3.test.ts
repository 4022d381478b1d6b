import assert from 'node:assert/strict'
import test from 'node:test'
import * as OTPAuth from 'otpauth'
import { TestClock } from '../harness/clock.js'
import { captureLog } from '../harness/log-capture.js'
import { startTestServer, uniqueName, type TestServer, type TestUser } from '../harness/server.js'
import { startSmtpServer } from '../harness/smtp.js'

const V2 = '/api.v2/api'
const clock = new TestClock()
const smtp = await startSmtpServer()
const log = captureLog('trace')
const server = await startTestServer({ clock, log: log.logger, env: { SMTP_URL: smtp.url, LOGIN_LOOKUP_RATE_LIMIT: '100000/60' } })

const seen = { codes: new Set<string>(), tickets: new Set<string>(), tokens: new Set<string>(), secrets: new Set<string>() }

const step = (body: Record<string, unknown>, s: TestServer = server, prefix = V2) => s.api.post(`${prefix}/auth/login_v3`, body)

async function member(s: TestServer = server): Promise<TestUser & { email: string }> {
  const name = uniqueName('v3')
  const user = await s.registerUser({ username: name, email: `${name}@example.test` })
  seen.tokens.add(user.token)
  // registering with an email mails its confirmation link first
  assert.equal((await smtp.next(user.email!)).subject, 'Confirm your email address for Tern')
  return { ...user, email: user.email! }
}

/** send_otp, then the code out of the mail that arrives. */
async function mailedCode(email: string, s: TestServer = server): Promise<string> {
  const sent = await step({ step: 'send_otp', email }, s)
  assert.equal(sent.status, 200, sent.text)
  const mail = await smtp.next(email)
  const code = /sign-in code is (\d{6})/.exec(mail.text)?.[1]
  assert.ok(code, 'the mail carries a 6-digit code')
  seen.codes.add(code)
  return code
}

function assertRefused(res: { status: number; body: any }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body))
  assert.equal(res.body.success, false)
  assert.equal(res.body.error.code, code)
  assert.equal(res.body.data, undefined)
}

function noSession(res: { body: any; text: string }) {
  assert.ok(!res.text.includes('session_token'), 'no session in the answer')
}

async function sessionsOf(userId: number) {
  return server.ctx.db
    .selectFrom('user_sessions')
    .select(['method', 'two_factor_verified'])
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute()
}

async function withTwoFactor(user: TestUser) {
  const secret = (await user.api.post(`${V2}/auth/2fa/setup`)).body.data.secret
  seen.secrets.add(secret)
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) })
  const next = () => {
    clock.advance(30_000)
    const code = totp.generate({ timestamp: clock.now() })
    seen.codes.add(code)
    return code
  }
  const enabled = await user.api.post(`${V2}/auth/2fa/enable`, { code: next() })
  assert.equal(enabled.status, 200)
  return next
}

test('email says whether an account has the address and how it signs in (case-insensitive)', async () => {
  const user = await member()
  const known = await step({ step: 'email', email: user.email.toUpperCase() })
  assert.equal(known.status, 200)
  assert.deepEqual(known.body, { success: true, data: { exists: true, methods: ['password', 'otp'] } })
  const unknown = await step({ step: 'email', email: `nobody_${uniqueName()}@example.test` })
  assert.deepEqual(unknown.body.data, { exists: false, methods: [] })
  // a username is not an email
  assertRefused(await step({ step: 'email', email: user.username }), 400, 'validation_error')
})

test('each step names the field it is missing; unknown steps and bad values are 400', async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ step: 'email' }, /email is required/],
    [{ step: 'send_otp' }, /email is required/],
    [{ step: 'verify_otp', email: 'a@example.test' }, /code is required/],
    [{ step: 'verify_otp', code: '123456' }, /email is required/],
    [{ step: 'password', email: 'a@example.test' }, /password is required/],
    [{ step: 'totp', code: '123456' }, /ticket is required/],
    [{ step: 'totp', ticket: 'x'.repeat(43) }, /code is required/],
    [{ step: 'magic', email: 'a@example.test' }, /step/],
    [{ step: '__proto__' }, /step/],
    [{ email: 'a@example.test' }, /step is required/],
    [{ step: 'email', email: 'not an email' }, /email/],
    [{ step: 'email', email: ['a@example.test'] }, /email/],
    [{ step: 'email', email: `${'a'.repeat(250)}@example.test` }, /email/],
    [{ step: 'password', email: 'a@example.test', password: 12345678 }, /password/],
  ]
  for (const [body, message] of cases) {
    const res = await step(body)
    assertRefused(res, 400, 'validation_error')
    assert.match(res.body.error.message, message, JSON.stringify(body))
  }
})

test('send_otp mails a 6-digit code; verify_otp with it opens an otp session and verifies the email', async () => {
  const user = await member()
  const sent = await step({ step: 'send_otp', email: user.email })
  assert.equal(sent.status, 200)
  assert.deepEqual(sent.body.data, { sent: true, expires_in: 600, resend_in: 60 })
  noSession(sent)
  const mail = await smtp.next(user.email)
  assert.match(mail.subject, /Your Tern sign-in code: \d{6}/)
  const code = /sign-in code is (\d{6})/.exec(mail.text)![1]
  seen.codes.add(code)
  assert.match(mail.html, new RegExp(`<strong>${code}</strong>`))

  const res = await step({ step: 'verify_otp', email: user.email, code, device: 'phone' })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(Object.keys(res.body.data).sort(), ['session_token', 'user'])
  seen.tokens.add(res.body.data.session_token)
  const me = await server.api.as(res.body.data.session_token).get(`${V2}/auth/me`)
  assert.equal(me.body.data.user_id, user.id)
  assert.equal(me.body.data.email_verified, true)
  const list = await server.api.as(res.body.data.session_token).get(`${V2}/sessions`)
  const current = list.body.items.find((s: any) => s.is_current)
  assert.equal(current.method, 'otp')
  assert.equal(current.device, 'phone')
})

test('a code works once', async () => {
  const user = await member()
  const code = await mailedCode(user.email)
  assert.equal((await step({ step: 'verify_otp', email: user.email, code })).status, 200)
  const again = await step({ step: 'verify_otp', email: user.email, code })
  assertRefused(again, 401, 'unauthorized')
  assert.equal((await sessionsOf(user.id)).length, 2, 'registration and the one otp session')
})

test('a code is bound to its address', async () => {
  const [ann, bob] = [await member(), await member()]
  const code = await mailedCode(ann.email)
  assertRefused(await step({ step: 'verify_otp', email: bob.email, code }), 401, 'unauthorized')
  assert.equal((await step({ step: 'verify_otp', email: ann.email, code })).status, 200)
})

test('five wrong codes kill the code: the right one is refused after that; a new code works', async () => {
  const user = await member()
  const code = await mailedCode(user.email)
  const wrong = code === '000000' ? '111111' : '000000'
  for (let i = 1; i <= 5; i++) {
    const res = await step({ step: 'verify_otp', email: user.email, code: wrong })
    assertRefused(res, 401, 'unauthorized')
    if (i === 5) assert.match(res.body.error.message, /last try/)
  }
  const dead = await step({ step: 'verify_otp', email: user.email, code })
  assertRefused(dead, 401, 'unauthorized')
  assert.match(dead.body.error.message, /Too many wrong codes/)
  clock.advance(60_000)
  const fresh = await mailedCode(user.email)
  assert.equal((await step({ step: 'verify_otp', email: user.email, code: fresh })).status, 200)
})

test('twenty wrong guesses at once still count as at most five tries', async () => {
  const user = await member()
  const code = await mailedCode(user.email)
  const guesses = Array.from({ length: 20 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'))
  const results = await Promise.all(guesses.map((guess) => step({ step: 'verify_otp', email: user.email, code: guess })))
  assert.ok(results.every((r) => r.status === 401))
  const row = await server.ctx.db
    .selectFrom('login_codes')
    .select('attempts')
    .where('email_key', '=', user.email.toLowerCase())
    .executeTakeFirstOrThrow()
  assert.equal(row.attempts, 5)
  assertRefused(await step({ step: 'verify_otp', email: user.email, code }), 401, 'unauthorized')
})

test('a code lives 10 minutes', async () => {
  const [ann, bob] = [await member(), await member()]
  const annCode = await mailedCode(ann.email)
  const bobCode = await mailedCode(bob.email)
  clock.advance(9 * 60_000 + 50_000)
  assert.equal((await step({ step: 'verify_otp', email: ann.email, code: annCode })).status, 200)
  clock.advance(20_000)
  assertRefused(await step({ step: 'verify_otp', email: bob.email, code: bobCode }), 401, 'unauthorized')
})

test('another code for the same address waits LOGIN_CODE_RESEND_SECONDS; the new code replaces the old', async () => {
  const user = await member()
  const first = await mailedCode(user.email)
  const again = await step({ step: 'send_otp', email: user.email })
  assertRefused(again, 429, 'rate_limited')
  assert.equal(again.headers.get('retry-after'), '60')
  clock.advance(45_000)
  const later = await step({ step: 'send_otp', email: user.email.toUpperCase() })
  assertRefused(later, 429, 'rate_limited')
  assert.equal(later.headers.get('retry-after'), '15')
  assert.equal(smtp.to(user.email).filter((mail) => /sign-in code/.test(mail.subject)).length, 1, 'no second code mail')
  clock.advance(15_000)
  const second = await mailedCode(user.email)
  assertRefused(await step({ step: 'verify_otp', email: user.email, code: first }), 401, 'unauthorized')
  assert.equal((await step({ step: 'verify_otp', email: user.email, code: second })).status, 200)
})

test('send_otp to an address without an account answers the same, throttles the same, and mails nothing', async () => {
  const nobody = `nobody_${uniqueName()}@example.test`
  const known = await member()
  const a = await step({ step: 'send_otp', email: nobody })
  const b = await step({ step: 'send_otp', email: known.email })
  assert.equal(a.status, 200)
  assert.deepEqual(a.body, b.body)
  const code = /sign-in code is (\d{6})/.exec((await smtp.next(known.email)).text)![1]
  seen.codes.add(code)
  assert.equal(smtp.to(nobody).length, 0, 'no mail to the unknown address (the known one arrived: the server was mailing)')
  const againNobody = await step({ step: 'send_otp', email: nobody })
  const againKnown = await step({ step: 'send_otp', email: known.email })
  assert.equal(againNobody.status, 429)
  assert.deepEqual(againNobody.body, againKnown.body)
  // verify_otp: the same refusal as a wrong code for an account
  const nobodyVerify = await step({ step: 'verify_otp', email: nobody, code })
  const knownWrong = await step({ step: 'verify_otp', email: known.email, code: code === '000000' ? '000001' : '000000' })
  assertRefused(nobodyVerify, 401, 'unauthorized')
  assert.deepEqual(nobodyVerify.body, knownWrong.body)
  // and an address nobody asked a code for
  assert.deepEqual((await step({ step: 'verify_otp', email: `x_${nobody}`, code })).body, knownWrong.body)
})

test('when the SMTP server refuses, send_otp is 503 mail_unavailable and the next try is not throttled', async () => {
  const user = await member()
  smtp.refuse(true)
  try {
    assertRefused(await step({ step: 'send_otp', email: user.email }), 503, 'mail_unavailable')
  } finally {
    smtp.refuse(false)
  }
  const code = await mailedCode(user.email)
  assert.equal((await step({ step: 'verify_otp', email: user.email, code })).status, 200)
})

test('password step: the email and password open a password session; wrong or unknown is one 401', async () => {
  const user = await member()
  const ok = await step({ step: 'password', email: user.email, password: user.password })
  assert.equal(ok.status, 200)
  seen.tokens.add(ok.body.data.session_token)
  assert.equal(ok.body.data.user.user_id, user.id)
  const wrong = await step({ step: 'password', email: user.email, password: 'wrong password' })
  const unknown = await step({ step: 'password', email: `nobody_${uniqueName()}@example.test`, password: user.password })
  assertRefused(wrong, 401, 'unauthorized')
  assert.deepEqual(wrong.body, unknown.body)
  assert.deepEqual(await sessionsOf(user.id), [
    { method: 'password', two_factor_verified: 0 },
    { method: 'password', two_factor_verified: 0 },
  ])
})

test('with 2FA on, verify_otp and password answer a ticket, and only the totp step opens the session', async () => {
  const user = await member()
  const nextTotp = await withTwoFactor(user)

  const code = await mailedCode(user.email)
  const byCode = await step({ step: 'verify_otp', email: user.email, code })
  assert.equal(byCode.status, 200)
  assert.equal(byCode.body.data.next, 'totp')
  noSession(byCode)
  seen.tickets.add(byCode.body.data.ticket)
  // the ticket is not a session, and no client flag skips the step
  assertRefused(await server.api.as(byCode.body.data.ticket).get(`${V2}/auth/me`), 401, 'unauthorized')
  const forged = await step({ step: 'totp', ticket: byCode.body.data.ticket, code: '000000', verified: true, two_factor_verified: true })
  assertRefused(forged, 401, 'unauthorized')
  const done = await step({ step: 'totp', ticket: byCode.body.data.ticket, code: nextTotp() })
  assert.equal(done.status, 200, done.text)
  seen.tokens.add(done.body.data.session_token)

  const byPassword = await step({ step: 'password', email: user.email, password: user.password })
  assert.equal(byPassword.body.data.next, 'totp')
  seen.tickets.add(byPassword.body.data.ticket)
  const finished = await step({ step: 'totp', ticket: byPassword.body.data.ticket, code: nextTotp() })
  assert.equal(finished.status, 200)
  seen.tokens.add(finished.body.data.session_token)
  // the ticket is spent
  assertRefused(await step({ step: 'totp', ticket: byPassword.body.data.ticket, code: nextTotp() }), 401, 'unauthorized')

  assert.deepEqual(await sessionsOf(user.id), [
    { method: 'password', two_factor_verified: 0 },
    { method: 'otp', two_factor_verified: 1 },
    { method: 'password', two_factor_verified: 1 },
  ])
})

test('the totp step refuses unknown tickets, and tickets of login (V2/auth/login) finish there too', async () => {
  const user = await member()
  const nextTotp = await withTwoFactor(user)
  assertRefused(await step({ step: 'totp', ticket: 'x'.repeat(43), code: nextTotp() }), 401, 'unauthorized')
  assertRefused(await step({ step: 'totp', ticket: user.token, code: nextTotp() }), 401, 'unauthorized')
  const login = await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  seen.tickets.add(login.body.data.ticket)
  const done = await step({ step: 'totp', ticket: login.body.data.ticket, code: nextTotp() })
  assert.equal(done.status, 200)
  seen.tokens.add(done.body.data.session_token)
})

test('the legacy mount /api/auth/login_v3 works the same and sets the V1 cookie with the session', async () => {
  const user = await member()
  const lookup = await step({ step: 'email', email: user.email }, server, '/api')
  assert.deepEqual(lookup.body.data, { exists: true, methods: ['password', 'otp'] })
  const sent = await step({ step: 'send_otp', email: user.email }, server, '/api')
  assert.equal(sent.headers.get('set-cookie'), null)
  const code = /sign-in code is (\d{6})/.exec((await smtp.next(user.email)).text)![1]
  seen.codes.add(code)
  const res = await step({ step: 'verify_otp', email: user.email, code }, server, '/api')
  assert.equal(res.status, 200)
  seen.tokens.add(res.body.data.session_token)
  assert.match(res.headers.get('set-cookie') ?? '', /^tern_session=/)
})

test('the email step is rate limited per IP (LOGIN_LOOKUP_RATE_LIMIT); the other steps are not counted there', async () => {
  const limited = await startTestServer({ env: { SMTP_URL: smtp.url, LOGIN_LOOKUP_RATE_LIMIT: '3/60' } })
  const user = await member(limited)
  for (let i = 0; i < 3; i++) assert.equal((await step({ step: 'email', email: user.email }, limited)).status, 200)
  const over = await step({ step: 'email', email: `other_${user.email}` }, limited)
  assertRefused(over, 429, 'rate_limited')
  assert.ok(Number(over.headers.get('retry-after')) > 0)
  // the legacy mount shares the allowance
  assertRefused(await step({ step: 'email', email: user.email }, limited, '/api'), 429, 'rate_limited')
  // positive control: other steps still answer
  const pw = await step({ step: 'password', email: user.email, password: user.password }, limited)
  assert.equal(pw.status, 200)
  seen.tokens.add(pw.body.data.session_token)
})

test('the login steps share LOGIN_RATE_LIMIT per IP', async () => {
  const limited = await startTestServer({ env: { SMTP_URL: smtp.url, LOGIN_RATE_LIMIT: '2/60' } })
  const user = await member(limited)
  assertRefused(await step({ step: 'password', email: user.email, password: 'wrong one' }, limited), 401, 'unauthorized')
  assertRefused(await step({ step: 'verify_otp', email: user.email, code: '123456' }, limited), 401, 'unauthorized')
  assertRefused(await step({ step: 'password', email: user.email, password: user.password }, limited), 429, 'rate_limited')
})

test('a suspended account gets no session from any step, and no ticket for the second one', async () => {
  const [user, twoStep] = [await member(), await member()]
  const nextTotp = await withTwoFactor(twoStep)
  const code = await mailedCode(user.email)
  const ticket = (await step({ step: 'password', email: twoStep.email, password: twoStep.password })).body.data.ticket
  seen.tickets.add(ticket)
  // positive control first: both accounts can sign in while active
  const ok = await step({ step: 'password', email: user.email, password: user.password })
  assert.equal(ok.status, 200)
  seen.tokens.add(ok.body.data.session_token)
  await server.ctx.db.updateTable('users').set({ is_active: 0 }).where('id', 'in', [user.id, twoStep.id]).execute()
  const before = (await sessionsOf(user.id)).length
  assertRefused(await step({ step: 'password', email: user.email, password: user.password }), 401, 'unauthorized')
  assertRefused(await step({ step: 'verify_otp', email: user.email, code }), 401, 'unauthorized')
  assertRefused(await step({ step: 'password', email: twoStep.email, password: twoStep.password }), 401, 'unauthorized')
  assertRefused(await step({ step: 'totp', ticket, code: nextTotp() }), 401, 'unauthorized')
  assert.equal((await sessionsOf(user.id)).length, before)
  assert.equal((await sessionsOf(twoStep.id)).length, 1, 'only the registration session')
})

test('no sign-in code, ticket, TOTP secret or session token is in the database or the log in clear', async () => {
  assert.ok(
    seen.codes.size > 15 && seen.tickets.size >= 3 && seen.tokens.size > 10 && seen.secrets.size >= 2,
    JSON.stringify(Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, v.size]))),
  )
  const tables = await server.ctx.db.introspection.getTables()
  assert.ok(tables.some((t) => t.name === 'login_codes'))
  let dump = ''
  for (const table of tables)
    dump += JSON.stringify(
      await server.ctx.db
        .selectFrom(table.name as any)
        .selectAll()
        .execute(),
    )
  const logText = log.text()
  assert.ok(dump.includes('"code_hash"'), 'the code rows were read')
  assert.ok(logText.includes('/auth/login_v3'), 'the requests are in the log')
  const loose = (value: string) => new RegExp(`(?<![A-Za-z0-9])${value.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}(?![A-Za-z0-9])`)
  for (const [kind, values] of Object.entries(seen)) {
    for (const value of values) {
      assert.ok(!loose(value).test(dump), `${kind} ${value} is in the database`)
      assert.ok(!loose(value).test(logText), `${kind} ${value} is in the log`)
    }
  }
})
