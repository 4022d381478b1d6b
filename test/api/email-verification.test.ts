import assert from 'node:assert/strict'
import test from 'node:test'
import { TestClock } from '../harness/clock.js'
import { captureLog } from '../harness/log-capture.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'
import { startSmtpServer } from '../harness/smtp.js'
import { waitFor } from '../harness/wait.js'

const V2 = '/api.v2/api'
const clock = new TestClock()
const smtp = await startSmtpServer()
const log = captureLog('trace')
const server = await startTestServer({ clock, log: log.logger, env: { SMTP_URL: smtp.url } })
const tokens = new Set<string>()

async function member(): Promise<TestUser & { email: string }> {
  const name = uniqueName('ev')
  const user = await server.registerUser({ username: name, email: `${name}@example.test` })
  tokens.add(user.token)
  return { ...user, email: user.email! }
}

/** The token of the next confirmation link mailed to `email`. */
async function linkToken(email: string): Promise<string> {
  const mail = await smtp.next(email)
  assert.equal(mail.subject, 'Confirm your email address for Tern')
  const link = /(\S+\/verify-email\?token=([A-Za-z0-9_-]+))/.exec(mail.text)
  assert.ok(link, 'the mail carries the link')
  assert.ok(link[1].startsWith(`${server.ctx.config.publicBaseUrl}/verify-email?token=`))
  tokens.add(link[2])
  return link[2]
}

const verified = async (user: TestUser) => (await user.api.get(`${V2}/auth/me`)).body.data.email_verified

function assertRefused(res: { status: number; body: any }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body))
  assert.equal(res.body.success, false)
  assert.equal(res.body.error.code, code)
}

test('registering with an email mails a link; its token confirms the address once', async () => {
  const user = await member()
  assert.equal(await verified(user), false)
  const token = await linkToken(user.email)
  const res = await server.api.post(`${V2}/auth/verify-email`, { token })
  assert.equal(res.status, 200)
  assert.deepEqual(res.body.data, { email_verified: true, email: user.email })
  assert.equal(await verified(user), true)
  assertRefused(await server.api.post(`${V2}/auth/verify-email`, { token }), 400, 'validation_error')
})

test('registering without an email mails nothing', async () => {
  const before = smtp.received.length
  const user = await server.registerUser()
  const control = await member()
  await linkToken(control.email)
  assert.equal(smtp.received.length, before + 1, 'only the control mail')
  assert.equal(await verified(user), false)
})

test('the link page confirms the address; opened again it says so; a bad link is a 400 page', async () => {
  const user = await member()
  const token = await linkToken(user.email)
  const page = await server.api.get('/verify-email', { query: { token } })
  assert.equal(page.status, 200)
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(page.text, /<h1>Email confirmed<\/h1>/)
  assert.ok(page.text.includes(user.email))
  assert.equal(await verified(user), true)
  const again = await server.api.get('/verify-email', { query: { token } })
  assert.equal(again.status, 200)
  assert.match(again.text, /used already, and the address is confirmed/)
  for (const query of [{ token: 'x'.repeat(43) }, {}, { token: '<script>alert(1)</script>' }, { token: '../../etc/passwd' }]) {
    const bad = await server.api.get('/verify-email', { query })
    assert.equal(bad.status, 400, JSON.stringify(query))
    assert.match(bad.text, /This link does not work/)
    assert.ok(!bad.text.includes('<script>alert'))
  }
  assert.equal((await server.api.get('/verify-email', { query: { token: 'x'.repeat(300) } })).status, 400)
})

test('a link lives 24 hours', async () => {
  const [ann, bob] = [await member(), await member()]
  const [annToken, bobToken] = [await linkToken(ann.email), await linkToken(bob.email)]
  clock.advance(24 * 3_600_000 - 60_000)
  assert.equal((await server.api.post(`${V2}/auth/verify-email`, { token: annToken })).status, 200)
  clock.advance(120_000)
  assertRefused(await server.api.post(`${V2}/auth/verify-email`, { token: bobToken }), 400, 'validation_error')
  assert.equal(await verified(bob), false)
})

test('resend mails a new link (the old one stops working), once a minute, only for an unconfirmed address', async () => {
  const user = await member()
  const first = await linkToken(user.email)
  assertRefused(await user.api.post(`${V2}/auth/verify-email/resend`), 429, 'rate_limited')
  clock.advance(60_000)
  const res = await user.api.post(`${V2}/auth/verify-email/resend`)
  assert.equal(res.status, 200)
  assert.deepEqual(res.body.data, { sent: true, email: user.email })
  const second = await linkToken(user.email)
  assertRefused(await server.api.post(`${V2}/auth/verify-email`, { token: first }), 400, 'validation_error')
  assert.equal((await server.api.post(`${V2}/auth/verify-email`, { token: second })).status, 200)
  clock.advance(60_000)
  assertRefused(await user.api.post(`${V2}/auth/verify-email/resend`), 409, 'conflict')
  const noEmail = await server.registerUser()
  assertRefused(await noEmail.api.post(`${V2}/auth/verify-email/resend`), 409, 'conflict')
  assertRefused(await server.api.post(`${V2}/auth/verify-email/resend`), 401, 'unauthorized')
})

test('changing the email needs the password, a free address, and leaves it unconfirmed until its link', async () => {
  const [user, other] = [await member(), await member()]
  // the other account's address is confirmed (one it had not confirmed could be claimed: account-email.test.ts)
  assert.equal((await server.api.post(`${V2}/auth/verify-email`, { token: await linkToken(other.email) })).status, 200)
  const oldToken = await linkToken(user.email)
  const next = `${uniqueName('new')}@example.test`
  assertRefused(await user.api.post(`${V2}/auth/email`, { email: next, password: 'wrong password' }), 403, 'forbidden')
  assertRefused(await user.api.post(`${V2}/auth/email`, { email: next }), 403, 'forbidden')
  assertRefused(await user.api.post(`${V2}/auth/email`, { email: other.email.toUpperCase(), password: user.password }), 409, 'conflict')
  assertRefused(await user.api.post(`${V2}/auth/email`, { email: 'not an email', password: user.password }), 400, 'validation_error')
  assertRefused(await server.api.post(`${V2}/auth/email`, { email: next, password: user.password }), 401, 'unauthorized')
  assert.equal((await user.api.get(`${V2}/auth/me`)).body.data.email, user.email, 'nothing changed so far')

  const res = await user.api.post(`${V2}/auth/email`, { email: next, password: user.password })
  assert.equal(res.status, 200)
  assert.deepEqual(res.body.data, { email: next, email_verified: false, verification_sent: true })
  const newToken = await linkToken(next)
  // the link to the old address confirms nothing now
  assertRefused(await server.api.post(`${V2}/auth/verify-email`, { token: oldToken }), 400, 'validation_error')
  assert.equal((await server.api.post(`${V2}/auth/verify-email`, { token: newToken })).status, 200)
  const me = (await user.api.get(`${V2}/auth/me`)).body.data
  assert.equal(me.email, next)
  assert.equal(me.email_verified, true)
})

test('hostile and malformed tokens are refused in the envelope', async () => {
  for (const token of ['__proto__', 'constructor', '../../etc/passwd', 'x'.repeat(43), 'é'.repeat(43)]) {
    assertRefused(await server.api.post(`${V2}/auth/verify-email`, { token }), 400, 'validation_error')
  }
  for (const body of [{}, { token: '' }, { token: 'x'.repeat(129) }, { token: 42 }, { token: ['x'] }]) {
    assertRefused(await server.api.post(`${V2}/auth/verify-email`, body), 400, 'validation_error')
  }
})

test('the legacy mount confirms too', async () => {
  const user = await member()
  const token = await linkToken(user.email)
  assert.equal((await server.api.post('/api/auth/verify-email', { token })).status, 200)
  assert.equal(await verified(user), true)
})

test('with the SMTP server down, registration still works; resend is 503 and not throttled after it', async () => {
  smtp.refuse(true)
  let user: TestUser & { email: string }
  try {
    user = await member()
    assert.equal(await verified(user), false)
    // the link is sent after the answer; its failure is a log line
    await waitFor(async () => log.entries().find((e) => e.userId === user.id && e.msg === 'the email confirmation link was not sent'), {
      timeoutMs: 5000,
      message: 'the failed send',
    })
    assertRefused(await user.api.post(`${V2}/auth/verify-email/resend`), 503, 'mail_unavailable')
  } finally {
    smtp.refuse(false)
  }
  const res = await user.api.post(`${V2}/auth/verify-email/resend`)
  assert.equal(res.status, 200, res.text)
  const token = await linkToken(user.email)
  assert.equal((await server.api.post(`${V2}/auth/verify-email`, { token })).status, 200)
})

test('no confirmation token or session token is in the database or the log in clear', async () => {
  assert.ok(tokens.size > 15)
  let dump = ''
  for (const table of await server.ctx.db.introspection.getTables()) {
    dump += JSON.stringify(
      await server.ctx.db
        .selectFrom(table.name as any)
        .selectAll()
        .execute(),
    )
  }
  const logText = log.text()
  assert.ok(dump.includes('"token_hash"'), 'the link rows were read')
  assert.ok(logText.includes('/verify-email?token=[redacted]'), 'the page requests are in the log, their token masked')
  for (const token of tokens) {
    assert.ok(!dump.includes(token), `${token} is in the database`)
    assert.ok(!logText.includes(token), `${token} is in the log`)
  }
})
