/**
 * Passwords after sign-up: changing it (with the current one, or for an account without one a
 * TOTP code or a mailed code), and a forgotten one reset by a mailed code. Mails go to a real SMTP
 * server (harness/smtp.ts).
 */
import assert from 'node:assert/strict'
import test from 'node:test'
import * as OTPAuth from 'otpauth'
import { assertError } from '../harness/assert.js'
import { TestClock } from '../harness/clock.js'
import { startTestServer, uniqueName, type TestServer, type TestUser } from '../harness/server.js'
import { startSilentServer, startSmtpServer } from '../harness/smtp.js'
import { PanelClient } from '../harness/panel.js'
import { TestSocket } from '../harness/socket.js'

const V2 = '/api.v2/api'
const clock = new TestClock()
const smtp = await startSmtpServer()
const server = await startTestServer({
  clock,
  env: {
    SMTP_URL: smtp.url,
    LOGIN_ACCOUNT_RATE_LIMIT: '4/900',
    PASSWORD_RESET_RATE_LIMIT: '1000/900',
    PASSWORD_RESET_EMAIL_RATE_LIMIT: '3/3600',
  },
})

async function member(s: TestServer = server): Promise<TestUser & { email: string }> {
  const name = uniqueName('pw')
  const user = await s.registerUser({ username: name, email: `${name}@example.test` })
  // the confirmation link of the registration is not what these tests read
  if (s === server) await smtp.next(user.email!)
  return { ...user, email: user.email! }
}

async function login(login: string, password: string, s: TestServer = server) {
  return s.api.post(`${V2}/auth/login`, { login, password })
}

async function signInAgain(user: TestUser, password = user.password): Promise<TestUser> {
  const res = await login(user.username, password)
  assert.equal(res.status, 200, res.text)
  const token = res.body.data.session_token
  return { ...user, token, api: server.api.as(token) }
}

const signedIn = async (user: TestUser) => (await user.api.get(`${V2}/auth/me`)).status

/** An account without a password, as an identity provider or a QR sign-in opens one. */
async function passwordless(): Promise<TestUser & { email: string }> {
  const user = await member()
  await server.ctx.db.updateTable('users').set({ password_hash: null }).where('id', '=', user.id).execute()
  return user
}

/** The 6-digit code of the next mail to `email` whose subject matches. */
async function mailedCode(email: string, subject: RegExp): Promise<{ code: string; text: string }> {
  const mail = await smtp.next(email)
  assert.match(mail.subject, subject)
  const code = /\b(\d{6})\b/.exec(mail.subject)?.[1]
  assert.ok(code, mail.subject)
  assert.ok(mail.text.includes(code))
  return { code, text: mail.text }
}

async function enableTwoFactor(user: TestUser): Promise<OTPAuth.TOTP> {
  const setup = await user.api.post(`${V2}/auth/2fa/setup`)
  assert.equal(setup.status, 200, setup.text)
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(setup.body.data.secret), algorithm: 'SHA1', digits: 6, period: 30 })
  const enable = await user.api.post(`${V2}/auth/2fa/enable`, { code: totp.generate({ timestamp: clock.now() }) })
  assert.equal(enable.status, 200, enable.text)
  // the next code must be of a later time step
  clock.advance(30_000)
  return totp
}

test('changing the password: the current one is checked, other sessions end (their sockets close), this one stays', async () => {
  const user = await member()
  const other = await signInAgain(user)
  const third = await signInAgain(user)
  const socket = await TestSocket.connect(server.url, other.token)
  const mine = await TestSocket.connect(server.url, user.token)

  assertError(
    await user.api.post(`${V2}/auth/password`, { current_password: 'not my password', new_password: 'a new password 1' }),
    403,
    'forbidden',
  )
  assertError(await user.api.post(`${V2}/auth/password`, { new_password: 'a new password 1' }), 400, 'validation_error')
  assertError(
    await user.api.post(`${V2}/auth/password`, { current_password: user.password, new_password: 'short' }),
    400,
    'validation_error',
  )
  assertError(
    await server.api.post(`${V2}/auth/password`, { current_password: user.password, new_password: 'a new password 1' }),
    401,
    'unauthorized',
  )
  // refused changes changed nothing: every session still works
  assert.equal(await signedIn(other), 200)

  const res = await user.api.post(`${V2}/auth/password`, { current_password: user.password, new_password: 'a new password 1' })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.data, { changed: true, sessions_ended: 2 })
  assert.equal(await signedIn(user), 200, 'the signed-in session that changed it stays')
  assert.equal(await signedIn(other), 401)
  assert.equal(await signedIn(third), 401)
  assert.equal((await socket.closing()).code, 4001)
  // the changing session's socket stays open and is served
  assert.equal(mine.closed, null)
  mine.send({ type: 'ping' })
  await mine.next('pong')
  assert.equal(mine.closed, null)

  assertError(await login(user.username, user.password), 401, 'unauthorized')
  assert.equal((await login(user.username, 'a new password 1')).status, 200)
  assert.equal((await login(user.email, 'a new password 1')).status, 200)
})

test('the legacy mount changes the password too', async () => {
  const user = await member()
  const res = await user.api.post('/api/auth/password', { current_password: user.password, new_password: 'legacy new password' })
  assert.equal(res.status, 200, res.text)
  assert.equal((await login(user.username, 'legacy new password')).status, 200)
})

test("wrong current passwords count against the account's guessing limit (shared with sign-in)", async () => {
  const user = await member()
  for (let i = 0; i < 3; i++) {
    assertError(
      await user.api.post(`${V2}/auth/password`, { current_password: `wrong ${i}`, new_password: 'a new password 2' }),
      403,
      'forbidden',
    )
  }
  // the fourth wrong try is at sign-in, by the same name: the limit is shared
  assertError(await login(user.username, 'wrong 3'), 401, 'unauthorized')
  const locked = await user.api.post(`${V2}/auth/password`, { current_password: user.password, new_password: 'a new password 2' })
  assertError(locked, 429, 'rate_limited')
  assert.ok(Number(locked.headers?.get('retry-after')) > 0)
  // positive control: another account is not locked
  const control = await member()
  assert.equal(
    (await control.api.post(`${V2}/auth/password`, { current_password: control.password, new_password: 'a new password 2' })).status,
    200,
  )
})

test('an account without a password sets one with a mailed code', async () => {
  const user = await passwordless()
  const other = await signInAgainByCode(user)
  assertError(await user.api.post(`${V2}/auth/password`, { new_password: 'first password 1' }), 400, 'validation_error')
  const sent = await user.api.post(`${V2}/auth/password/code`)
  assert.equal(sent.status, 200, sent.text)
  assert.equal(sent.body.data.sent, true)
  assert.equal(sent.body.data.email, user.email)
  const { code } = await mailedCode(user.email, /confirmation code/)
  // another code at once: 429
  assertError(await user.api.post(`${V2}/auth/password/code`), 429, 'rate_limited')
  const wrong = code === '000000' ? '000001' : '000000'
  assertError(await user.api.post(`${V2}/auth/password`, { code: wrong, new_password: 'first password 1' }), 403, 'forbidden')
  // a code mailed to delete the account does not set a password (and the other way round)
  const res = await user.api.post(`${V2}/auth/password`, { code, new_password: 'first password 1' })
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.data.sessions_ended, 1)
  assert.equal(await signedIn(other), 401)
  assert.equal((await login(user.username, 'first password 1')).status, 200)
  // the code worked once; now the account has a password, which is what it gives from now on
  assertError(await user.api.post(`${V2}/auth/password`, { code, new_password: 'second password 1' }), 400, 'validation_error')
  assertError(await user.api.post(`${V2}/auth/password/code`), 409, 'conflict')
})

/** A second session of an account (by a mailed sign-in code, which works without a password). */
async function signInAgainByCode(user: TestUser & { email: string }): Promise<TestUser> {
  clock.advance(61_000)
  assert.equal((await server.api.post(`${V2}/auth/login_v3`, { step: 'send_otp', email: user.email })).status, 200)
  const mail = await smtp.next(user.email)
  const code = /\b(\d{6})\b/.exec(mail.subject)![1]
  const res = await server.api.post(`${V2}/auth/login_v3`, { step: 'verify_otp', email: user.email, code })
  assert.equal(res.status, 200, res.text)
  const token = res.body.data.session_token
  return { ...user, token, api: server.api.as(token) }
}

test('an account without a password but with two-factor sets one with a TOTP code', async () => {
  const user = await passwordless()
  const totp = await enableTwoFactor(user)
  assertError(await user.api.post(`${V2}/auth/password/code`), 409, 'conflict')
  assertError(await user.api.post(`${V2}/auth/password`, { code: '12345', new_password: 'totp password 1' }), 403, 'forbidden')
  const res = await user.api.post(`${V2}/auth/password`, {
    code: totp.generate({ timestamp: clock.now() }),
    new_password: 'totp password 1',
  })
  assert.equal(res.status, 200, res.text)
  const signIn = await login(user.username, 'totp password 1')
  assert.equal(signIn.status, 200)
  assert.equal(signIn.body.data.next, 'totp')
})

test("forgot password: the same answer for any address, a mail only to an account's", async () => {
  const user = await member()
  const unknown = `${uniqueName('nobody')}@example.test`
  const a = await server.api.post(`${V2}/auth/password/forgot`, { email: unknown })
  const b = await server.api.post(`${V2}/auth/password/forgot`, { email: user.email.toUpperCase() })
  assert.equal(a.status, 200, a.text)
  assert.equal(b.status, 200, b.text)
  assert.deepEqual(a.body, b.body)
  assert.deepEqual(a.body.data, { sent: true, expires_in: 900 })
  const { code, text } = await mailedCode(user.email, /Reset your Tern password/)
  const link = /(http\S+\/reset-password\?reset_token=([A-Za-z0-9_-]+))/.exec(text)
  assert.ok(link, text)
  assert.ok(link[1].startsWith(`${server.ctx.config.publicBaseUrl}/reset-password?`), text)
  assert.equal(Buffer.from(link[2], 'base64url').toString(), `${user.email}\n${code}`, 'the link carries the address and the code')
  assert.equal(smtp.to(unknown).length, 0, 'nothing for an address without an account (the mail above is the positive control)')
  // a code for an address without an account is refused like a wrong one
  assertError(
    await server.api.post(`${V2}/auth/password/reset`, { email: unknown, code, new_password: 'whatever 123' }),
    400,
    'validation_error',
  )
})

test('reset: the code sets a new password once, and every session ends', async () => {
  const user = await member()
  const second = await signInAgain(user)
  const socket = await TestSocket.connect(server.url, second.token)
  await server.api.post(`${V2}/auth/password/forgot`, { email: user.email })
  const { code } = await mailedCode(user.email, /Reset/)
  assertError(
    await server.api.post(`${V2}/auth/password/reset`, { email: user.email, code, new_password: 'short' }),
    400,
    'validation_error',
  )
  assert.equal(await signedIn(user), 200, 'a refused reset ends nothing')
  const res = await server.api.post(`${V2}/auth/password/reset`, { email: user.email, code, new_password: 'after reset 123' })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.data, { reset: true })
  assert.equal(await signedIn(user), 401)
  assert.equal(await signedIn(second), 401)
  assert.equal((await socket.closing()).code, 4001)
  assertError(await login(user.username, user.password), 401, 'unauthorized')
  assert.equal((await login(user.username, 'after reset 123')).status, 200)
  // single use
  assertError(
    await server.api.post(`${V2}/auth/password/reset`, { email: user.email, code, new_password: 'again reset 123' }),
    400,
    'validation_error',
  )
  assert.equal((await login(user.username, 'after reset 123')).status, 200)
})

test('reset: a code takes at most 5 tries, and expires after 15 minutes', async () => {
  const user = await member()
  await server.api.post(`${V2}/auth/password/forgot`, { email: user.email })
  const { code } = await mailedCode(user.email, /Reset/)
  const wrong = code === '111111' ? '222222' : '111111'
  for (let i = 0; i < 5; i++) {
    assertError(
      await server.api.post(`${V2}/auth/password/reset`, { email: user.email, code: wrong, new_password: 'guessed 12345' }),
      400,
      'validation_error',
    )
  }
  assertError(
    await server.api.post(`${V2}/auth/password/reset`, { email: user.email, code, new_password: 'guessed 12345' }),
    400,
    'validation_error',
  )
  assert.equal((await login(user.username, user.password)).status, 200, 'the password is unchanged')

  await server.api.post(`${V2}/auth/password/forgot`, { email: user.email })
  const late = await mailedCode(user.email, /Reset/)
  clock.advance(15 * 60_000 + 1000)
  assertError(
    await server.api.post(`${V2}/auth/password/reset`, { email: user.email, code: late.code, new_password: 'too late 12345' }),
    400,
    'validation_error',
  )
  // positive control: a fresh code works
  await server.api.post(`${V2}/auth/password/forgot`, { email: user.email })
  const fresh = await mailedCode(user.email, /Reset/)
  assert.equal(
    (await server.api.post(`${V2}/auth/password/reset`, { email: user.email, code: fresh.code, new_password: 'in time 12345' })).status,
    200,
  )
})

test('forgot password is limited per address, alike for addresses with and without an account', async () => {
  const user = await member()
  const unknown = `${uniqueName('nobody')}@example.test`
  for (const email of [user.email, unknown]) {
    for (let i = 0; i < 3; i++) assert.equal((await server.api.post(`${V2}/auth/password/forgot`, { email })).status, 200)
    const res = await server.api.post(`${V2}/auth/password/forgot`, { email })
    assertError(res, 429, 'rate_limited', email)
    assert.ok(Number(res.headers?.get('retry-after')) > 0)
  }
  // positive control: another address is not limited
  assert.equal((await server.api.post(`${V2}/auth/password/forgot`, { email: `${uniqueName('other')}@example.test` })).status, 200)
})

test('forgot password is limited per client IP, and answers before the mail is handed over', async () => {
  const silent = await startSilentServer()
  const s = await startTestServer({ env: { SMTP_URL: silent.url, MAIL_TIMEOUT_SECONDS: '5', PASSWORD_RESET_RATE_LIMIT: '3/900' } })
  try {
    const user = await member(s)
    const started = Date.now()
    const res = await s.api.post(`${V2}/auth/password/forgot`, { email: user.email })
    assert.equal(res.status, 200, res.text)
    assert.ok(Date.now() - started < 2000, 'the answer does not wait for the SMTP server (which never answers)')
    for (let i = 0; i < 2; i++)
      assert.equal((await s.api.post(`${V2}/auth/password/forgot`, { email: `${uniqueName('ip')}@example.test` })).status, 200)
    assertError(await s.api.post(`${V2}/auth/password/forgot`, { email: `${uniqueName('ip')}@example.test` }), 429, 'rate_limited')
  } finally {
    await s.close()
    await silent.close()
  }
})

test('the pages: "Forgot your password?" on sign-in, then the code mailed and a new password set through CSRF-protected forms', async () => {
  const user = await member()
  const web = new PanelClient(server.url)
  const signInPage = await web.get('/login')
  assert.match(signInPage.text, /<a href="\/forgot-password">Forgot your password\?<\/a>/)
  const forgot = await web.get('/forgot-password')
  assert.equal(forgot.status, 200)
  assert.match(forgot.text, /<input type="hidden" name="_csrf" value="[^"]{20,}">/)
  // a form without the CSRF token is refused and mails nothing
  const refused = await web.post('/forgot-password', { email: user.email }, { csrf: 'none' })
  assert.equal(refused.status, 403)
  await web.get('/forgot-password')
  const asked = await web.post('/forgot-password', { email: user.email })
  assert.equal(asked.status, 200, asked.text)
  assert.match(asked.text, /If an account has this address, a code is on its way/)
  const { text } = await mailedCode(user.email, /Reset/)
  assert.equal(smtp.to(user.email).filter((m) => /Reset/.test(m.subject)).length, 1, 'one mail: the refused form sent none')
  const link = new URL(/(http\S+\/reset-password\?\S+)/.exec(text)![1])
  const code = /\b(\d{6})\b/.exec(text)![1]
  const page = await web.get(`${link.pathname}${link.search}`)
  assert.equal(page.status, 200)
  assert.match(page.text, new RegExp(`name="code"[^>]*value="${code}"`), 'the link fills the code in')
  assert.ok(page.text.includes(`value="${user.email}"`), 'and the address')
  const broken = await web.get('/reset-password?reset_token=bm90IGEgdG9rZW4')
  assert.match(broken.text, /This link is incomplete/)
  const refusedReset = await web.post('/reset-password', { email: user.email, code, new_password: 'from the page 1' }, { csrf: 'none' })
  assert.equal(refusedReset.status, 403, 'no CSRF token, no reset')
  assert.equal((await login(user.username, user.password)).status, 200, 'the password is unchanged')
  await web.get(`${link.pathname}${link.search}`)
  const done = await web.post('/reset-password', { email: user.email, code, new_password: 'from the page 1' })
  assert.equal(done.status, 200, done.text)
  assert.match(done.text, /Your password is changed/)
  assert.equal((await login(user.username, 'from the page 1')).status, 200)
  assert.equal(await signedIn(user), 401)
})
