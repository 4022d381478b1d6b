import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import test from 'node:test'
import * as OTPAuth from 'otpauth'
import { TestClock } from '../harness/clock.js'
import { testRedisUrl } from '../harness/database.js'
import { startTestServer, uniqueName, type TestServer, type TestUser } from '../harness/server.js'

const V2 = '/api.v2/api'
const MAX = 5
const WINDOW_SECONDS = 4
const clock = new TestClock()
// TRUST_PROXY=1: each request names its client address in X-Forwarded-For, so tries come "from" many IPs
const env = { LOGIN_ACCOUNT_RATE_LIMIT: `${MAX}/${WINDOW_SECONDS}`, TRUST_PROXY: '1' }
const server = await startTestServer({ clock, env })

let ipCounter = 0
const nextIp = () => `198.51.100.${(ipCounter++ % 250) + 1}`
const fromAnywhere = () => ({ headers: { 'x-forwarded-for': nextIp() } })

const login = (s: TestServer, name: string, password: string) => s.api.post(`${V2}/auth/login`, { login: name, password }, fromAnywhere())
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function assertLocked(res: { status: number; body: any; headers: Headers; text: string }) {
  assert.equal(res.status, 429, res.text)
  assert.equal(res.body.error.code, 'rate_limited')
  const retry = Number(res.headers.get('retry-after'))
  assert.ok(retry >= 1 && retry <= WINDOW_SECONDS, `Retry-After ${retry}`)
  assert.ok(!res.text.includes('session_token') && !res.text.includes('ticket'))
}

async function member(s: TestServer = server, email = true): Promise<TestUser> {
  const name = uniqueName('lim')
  return s.registerUser(email ? { username: name, email: `${name}@example.test` } : { username: name })
}

test(`wrong passwords from many IPs lock the account after ${MAX}: then even the right password is 429 with Retry-After, until the window ends`, async () => {
  const alice = await member()
  const bob = await member()
  for (let i = 0; i < MAX; i++) {
    const res = await login(server, alice.username, 'wrong password')
    assert.equal(res.status, 401, res.text)
  }
  assertLocked(await login(server, alice.username, 'wrong password'))
  assertLocked(await login(server, alice.username, alice.password))
  // positive control: another account, from the same addresses, is not locked
  assert.equal((await login(server, bob.username, bob.password)).status, 200)
  await sleep(WINDOW_SECONDS * 1000 + 200)
  const after = await login(server, alice.username, alice.password)
  assert.equal(after.status, 200, after.text)
})

test('right passwords do not use the allowance up', async () => {
  const carol = await member()
  for (let i = 0; i < MAX * 2; i++) assert.equal((await login(server, carol.username, carol.password)).status, 200)
  for (let i = 0; i < MAX - 1; i++) assert.equal((await login(server, carol.username, 'nope')).status, 401)
  assert.equal((await login(server, carol.username, carol.password)).status, 200)
})

test('a name nobody has is locked exactly like a real one: the lock does not tell whether it exists', async () => {
  const real = await member()
  const ghost = uniqueName('ghost')
  const answers = async (name: string) => {
    const out: Array<[number, string]> = []
    for (let i = 0; i <= MAX + 1; i++) {
      const res = await login(server, name, 'wrong password')
      out.push([res.status, res.body.error.message.replace(/\d+ s$/, 'N s')])
    }
    return out
  }
  const [forReal, forGhost] = [await answers(real.username), await answers(ghost)]
  assert.deepEqual(forGhost, forReal)
  assert.deepEqual(
    forReal.map(([status]) => status),
    [...Array(MAX).fill(401), 429, 429],
  )
})

test('parallel guesses cannot outrun the limit', async () => {
  const dave = await member()
  const results = await Promise.all(Array.from({ length: MAX * 3 }, () => login(server, dave.username, 'wrong password')))
  const statuses = results.map((r) => r.status)
  assert.equal(statuses.filter((s) => s === 401).length, MAX, String(statuses))
  assert.equal(statuses.filter((s) => s === 429).length, MAX * 2)
})

test('login_v3 password steps count against the same limit as login by email; the username is counted apart', async () => {
  const erin = await member()
  const v3 = (password: string) => server.api.post(`${V2}/auth/login_v3`, { step: 'password', email: erin.email, password }, fromAnywhere())
  for (let i = 0; i < MAX - 2; i++) assert.equal((await v3('wrong')).status, 401)
  for (let i = 0; i < 2; i++) assert.equal((await login(server, erin.email!.toUpperCase(), 'wrong')).status, 401)
  assertLocked(await v3(erin.password))
  assertLocked(await login(server, erin.email!, erin.password))
  // the username is another name (counted apart: the lock does not tie names together)
  assert.equal((await login(server, erin.username, erin.password)).status, 200)
})

async function withTwoFactor(user: TestUser) {
  const secret = (await user.api.post(`${V2}/auth/2fa/setup`)).body.data.secret
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) })
  const next = () => {
    clock.advance(30_000)
    return totp.generate({ timestamp: clock.now() })
  }
  assert.equal((await user.api.post(`${V2}/auth/2fa/enable`, { code: next() })).status, 200)
  return next
}

test(`wrong TOTP codes count per account across tickets: after ${MAX} the right code is 429 too`, async () => {
  const frank = await member()
  const next = await withTwoFactor(frank)
  const ticket = async () => {
    const res = await login(server, frank.username, frank.password)
    assert.equal(res.body.data.next, 'totp', res.text)
    return res.body.data.ticket as string
  }
  // positive control: a right code finishes a login (and is given back)
  assert.equal((await server.api.post(`${V2}/auth/login/totp`, { ticket: await ticket(), code: next() })).status, 200)
  // wrong codes spread over tickets (each ticket alone would allow 5)
  const tickets = [await ticket(), await ticket(), await ticket()]
  for (let i = 0; i < MAX; i++) {
    const res = await server.api.post(`${V2}/auth/login/totp`, { ticket: tickets[i % 2], code: '000000' }, fromAnywhere())
    assert.equal(res.status, 401, res.text)
  }
  const t = tickets[2]
  assertLocked(await server.api.post(`${V2}/auth/login/totp`, { ticket: t, code: next() }, fromAnywhere()))
  assertLocked(await server.api.post(`${V2}/auth/login_v3`, { step: 'totp', ticket: t, code: next() }, fromAnywhere()))
  await sleep(WINDOW_SECONDS * 1000 + 200)
  assert.equal((await server.api.post(`${V2}/auth/login/totp`, { ticket: t, code: next() })).status, 200)
})

test('wrong codes to 2fa/disable count too: a stolen session cannot guess its way to turning 2FA off', async () => {
  const grace = await member()
  const next = await withTwoFactor(grace)
  for (let i = 0; i < MAX; i++) assert.equal((await grace.api.post(`${V2}/auth/2fa/disable`, { code: '111111' })).status, 400)
  assertLocked(await grace.api.post(`${V2}/auth/2fa/disable`, { code: next() }))
  await sleep(WINDOW_SECONDS * 1000 + 200)
  assert.equal((await grace.api.post(`${V2}/auth/2fa/disable`, { code: next() })).status, 200)
})

test('the counters are shared by instances through Redis (REDIS_URL), and hold no name in clear', async (t) => {
  if (!testRedisUrl) {
    t.skip('needs TEST_REDIS_URL (npm run test:pg sets it): two instances sharing Redis')
    return
  }
  const prefix = `tern-test-${randomBytes(6).toString('hex')}:`
  const a = await startTestServer({ env: { ...env, REDIS_PREFIX: prefix } })
  const b = await startTestServer({ database: a.database, env: { ...env, REDIS_PREFIX: prefix } })
  const henry = await member(a)
  for (let i = 0; i < MAX; i++) assert.equal((await login(i % 2 ? a : b, henry.username, 'wrong')).status, 401)
  assertLocked(await login(a, henry.username, henry.password))
  assertLocked(await login(b, henry.username, henry.password))
  const keys = await a.ctx.redis!.keys(`${prefix}login-fail:*`)
  assert.ok(keys.length >= 1, 'the counter is in Redis')
  assert.ok(
    keys.every((key) => !key.toLowerCase().includes(henry.username.toLowerCase())),
    'names are hashed',
  )
  // positive control: another account on the same instances
  const ivan = await member(b)
  assert.equal((await login(a, ivan.username, ivan.password)).status, 200)
})
