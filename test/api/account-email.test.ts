/**
 * Nobody holds an email address they do not own: an unconfirmed address lapses after
 * UNCONFIRMED_EMAIL_TTL_DAYS, and meanwhile its real owner claims it by confirming it.
 */
import assert from 'node:assert/strict'
import test from 'node:test'
import { assertError } from '../harness/assert.js'
import { TestClock } from '../harness/clock.js'
import { startTestServer, uniqueName, type TestServer, type TestUser } from '../harness/server.js'
import { startSmtpServer } from '../harness/smtp.js'
import { waitFor } from '../harness/wait.js'

const V2 = '/api.v2/api'
const clock = new TestClock()
const smtp = await startSmtpServer()
const server = await startTestServer({ clock, env: { SMTP_URL: smtp.url, UNCONFIRMED_EMAIL_TTL_DAYS: '7' } })

const address = () => `${uniqueName('owner')}@example.test`

/** The token of the next confirmation link mailed to `email`. */
async function linkToken(email: string): Promise<string> {
  const mail = await smtp.next(email)
  assert.equal(mail.subject, 'Confirm your email address for Tern')
  const link = /\/verify-email\?token=([A-Za-z0-9_-]+)/.exec(mail.text)
  assert.ok(link, mail.text)
  return link[1]
}

const me = async (user: TestUser) => (await user.api.get(`${V2}/auth/me`)).body.data as { email: string | null; email_verified: boolean }

/** Someone registers with an address that is not theirs (its link goes to the real owner, who ignores it). */
async function squat(email: string, s: TestServer = server): Promise<TestUser> {
  const squatter = await s.registerUser({ email })
  if (s === server) await linkToken(email)
  return squatter
}

test('the real owner registers with an address someone holds unconfirmed, and claims it by confirming', async () => {
  const email = address()
  const squatter = await squat(email)
  const res = await server.api.post(`${V2}/auth/register`, { username: uniqueName('real'), password: 'real owner 123', email })
  assert.equal(res.status, 201, res.text)
  assert.equal(res.body.data.user.email, null, "not the new account's until confirmed")
  const owner = { api: server.api.as(res.body.data.session_token) } as TestUser
  assert.equal((await me(squatter)).email, email, 'the squatter still has it meanwhile')

  const token = await linkToken(email)
  const confirmed = await server.api.post(`${V2}/auth/verify-email`, { token })
  assert.equal(confirmed.status, 200, confirmed.text)
  assert.deepEqual(confirmed.body.data, { email_verified: true, email })
  const mine = await me(owner)
  assert.equal(mine.email, email)
  assert.equal(mine.email_verified, true)
  assert.equal((await me(squatter)).email, null, 'taken off the squatter')
  // the owner signs in with it; the squatter no longer can
  assert.equal((await server.api.post(`${V2}/auth/login`, { login: email, password: 'real owner 123' })).status, 200)
})

test('a confirmed address is never taken: registration and auth/email answer 409', async () => {
  const email = address()
  const holder = await server.registerUser({ email })
  const token = await linkToken(email)
  assert.equal((await server.api.post(`${V2}/auth/verify-email`, { token })).status, 200)
  assertError(
    await server.api.post(`${V2}/auth/register`, { username: uniqueName('x'), password: 'password 1234', email }),
    409,
    'conflict',
  )
  const other = await server.registerUser()
  assertError(await other.api.post(`${V2}/auth/email`, { email, password: other.password }), 409, 'conflict')
  assert.equal((await me(holder)).email, email)
})

test('auth/email to an address held unconfirmed mails a claiming link; opening it moves the address', async () => {
  const email = address()
  const squatter = await squat(email)
  const owner = await server.registerUser()
  const res = await owner.api.post(`${V2}/auth/email`, { email, password: owner.password })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.data, { email, email_verified: false, verification_sent: true })
  assert.equal((await me(owner)).email, null, 'not mine until I confirm')
  // the page confirms it too
  const page = await server.api.get('/verify-email', { query: { token: await linkToken(email) } })
  assert.equal(page.status, 200, page.text)
  assert.equal((await me(owner)).email, email)
  assert.equal((await me(owner)).email_verified, true)
  assert.equal((await me(squatter)).email, null)
})

test('a claiming link does nothing once the holder has confirmed the address', async () => {
  const email = address()
  const holder = await server.registerUser({ email })
  const holderToken = await linkToken(email)
  const claimant = await server.registerUser()
  assert.equal((await claimant.api.post(`${V2}/auth/email`, { email, password: claimant.password })).status, 200)
  const claimToken = await linkToken(email)
  assert.equal((await server.api.post(`${V2}/auth/verify-email`, { token: holderToken })).status, 200)
  assertError(await server.api.post(`${V2}/auth/verify-email`, { token: claimToken }), 409, 'conflict')
  assert.equal((await me(holder)).email, email)
  assert.equal((await me(claimant)).email, null)
})

test('an unconfirmed address lapses: after UNCONFIRMED_EMAIL_TTL_DAYS it is free, and off the account that had it', async () => {
  const email = address()
  const squatter = await squat(email)
  const other = address()
  const squatter2 = await squat(other)
  clock.advance(6 * 86_400_000)
  // positive control: before it lapses, a new registration only claims it
  const early = await server.api.post(`${V2}/auth/register`, { username: uniqueName('early'), password: 'password 1234', email })
  assert.equal(early.body.data.user.email, null)
  await linkToken(email)
  clock.advance(86_400_000 + 60_000)
  const late = await server.api.post(`${V2}/auth/register`, { username: uniqueName('late'), password: 'password 1234', email })
  assert.equal(late.status, 201, late.text)
  assert.equal(late.body.data.user.email, email, "the lapsed address is the new account's at once (unconfirmed)")
  assert.equal((await me(squatter)).email, null)
  // auth/email takes a lapsed one directly too
  const taker = await server.registerUser()
  const res = await taker.api.post(`${V2}/auth/email`, { email: other, password: taker.password })
  assert.equal(res.status, 200, res.text)
  assert.equal((await me(taker)).email, other)
  assert.equal((await me(squatter2)).email, null)
})

test('the account-cleanup job takes lapsed addresses off their accounts; confirmed ones stay', async () => {
  const c = new TestClock()
  const s = await startTestServer({ clock: c, env: { UNCONFIRMED_EMAIL_TTL_DAYS: '1' } })
  try {
    const squatter = await squat(address(), s)
    const confirmedEmail = address()
    const owner = await s.registerUser({ email: confirmedEmail })
    await s.ctx.db.updateTable('users').set({ email_verified: 1 }).where('id', '=', owner.id).execute()
    c.advance(86_400_000 + 60_000)
    // the job runs at start
    const restarted = await s.restart()
    const squatterApi = restarted.api.as(squatter.token)
    await waitFor(async () => ((await squatterApi.get(`${V2}/auth/me`)).body.data.email === null ? true : undefined), {
      timeoutMs: 5000,
      message: 'the lapsed address is dropped',
    })
    assert.equal((await restarted.api.as(owner.token).get(`${V2}/auth/me`)).body.data.email, confirmedEmail)
  } finally {
    await s.close()
  }
})
