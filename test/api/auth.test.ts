import assert from 'node:assert/strict'
import test from 'node:test'
import { startTestServer, uniqueName } from '../harness/server.js'

const server = await startTestServer()
const V2 = '/api.v2/api'

test('register returns 201 with the user and a session token that works at once', async () => {
  const username = uniqueName('Reg')
  const res = await server.api.post(`${V2}/auth/register`, {
    username,
    password: 'long enough',
    email: `${username}@example.com`,
    display_name: 'Reggie',
  })
  assert.equal(res.status, 201)
  assert.equal(res.body.success, true)
  const { user, session_token } = res.body.data
  assert.match(session_token, /^[A-Za-z0-9_-]{43}$/)
  assert.equal(user.username, username)
  assert.equal(user.display_name, 'Reggie')
  assert.equal(user.email, `${username}@example.com`)
  assert.equal(user.is_admin, false)
  assert.equal(typeof user.user_id, 'number')
  assert.equal(user.password_hash, undefined)
  assert.equal(user.two_factor_secret, undefined)
  assert.ok(!res.text.includes('argon2'), 'no password hash anywhere in the response')

  const me = await server.api.as(session_token).get(`${V2}/auth/me`)
  assert.equal(me.status, 200)
  assert.deepEqual(Object.keys(me.body.data).sort(), [
    'avatar_url',
    'bio',
    'bot_webapp_url',
    'created_at',
    'display_name',
    'email',
    'email_verified',
    'followers_count',
    'following_count',
    'groups_count',
    'has_story',
    'is_admin',
    'is_bot',
    'is_online',
    'is_premium',
    'last_seen',
    'phone',
    'status_emoji',
    'user_id',
    'username',
  ])
  assert.equal(me.body.data.user_id, user.user_id)
  assert.match(me.body.data.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
})

test('display_name defaults to the username and email is optional', async () => {
  const user = await server.registerUser()
  const me = await user.api.get(`${V2}/auth/me`)
  assert.equal(me.body.data.display_name, user.username)
  assert.equal(me.body.data.email, null)
})

for (const [username, why] of [
  ['ab', 'too short'],
  ['a'.repeat(33), 'too long'],
  ['bad name', 'space'],
  ['bad-name', 'dash'],
  ['имя_юзера', 'non-ASCII letters'],
] as const) {
  test(`register refuses a username with ${why}, naming the rule`, async () => {
    const res = await server.api.post(`${V2}/auth/register`, { username, password: 'long enough' })
    assert.equal(res.status, 400)
    assert.equal(res.body.success, false)
    assert.equal(res.body.error.code, 'validation_error')
    assert.equal(res.body.error.message, 'Username must be 3 to 32 characters: letters, digits and underscores')
  })
}

test('register refuses a short password, a bad email, missing and mistyped fields', async () => {
  const cases: [unknown, RegExp][] = [
    [{ username: uniqueName(), password: 'short' }, /password/i],
    [{ username: uniqueName(), password: 'long enough', email: 'not-an-email' }, /email/],
    [{ username: uniqueName() }, /password is required/],
    [{ password: 'long enough' }, /username is required/],
    [{ username: uniqueName(), password: 12345678 }, /password/i],
    [{ username: 123456, password: 'long enough' }, /Username/],
  ]
  for (const [body, message] of cases) {
    const res = await server.api.post(`${V2}/auth/register`, body)
    assert.equal(res.status, 400, JSON.stringify(body))
    assert.equal(res.body.error.code, 'validation_error')
    assert.match(res.body.error.message, message)
  }
})

test('unknown fields are dropped, never stored (no self-made admins)', async () => {
  const username = uniqueName()
  const res = await server.api.post(`${V2}/auth/register`, { username, password: 'long enough', is_admin: true, id: 1 })
  assert.equal(res.status, 201)
  assert.equal(res.body.data.user.is_admin, false)
  assert.notEqual(res.body.data.user.user_id, 1)
})

test('duplicate username or email is a 409 conflict, case-insensitively', async () => {
  const first = await server.registerUser({ email: `${uniqueName('m')}@example.com` })
  // a confirmed address (one not confirmed could be claimed by its owner: account-email.test.ts)
  await server.ctx.db.updateTable('users').set({ email_verified: 1 }).where('id', '=', first.id).execute()
  const sameName = await server.api.post(`${V2}/auth/register`, { username: first.username.toUpperCase(), password: 'long enough' })
  assert.equal(sameName.status, 409)
  assert.equal(sameName.body.error.code, 'conflict')
  const sameEmail = await server.api.post(`${V2}/auth/register`, {
    username: uniqueName(),
    password: 'long enough',
    email: first.email!.toUpperCase(),
  })
  assert.equal(sameEmail.status, 409)
  assert.equal(sameEmail.body.error.code, 'conflict')
})

test('the reserved Saved Messages username cannot be registered', async () => {
  const res = await server.api.post(`${V2}/auth/register`, { username: 'saved_messages', password: 'long enough' })
  assert.equal(res.status, 409)
})

test('login by username or by email, case-insensitively, records the device', async () => {
  const email = `${uniqueName('e')}@example.com`
  const user = await server.registerUser({ email })
  const byName = await server.api.post(`${V2}/auth/login`, {
    login: user.username.toUpperCase(),
    password: user.password,
    device: 'Pixel 9',
  })
  assert.equal(byName.status, 200)
  assert.equal(byName.body.data.user.user_id, user.id)
  const byEmail = await server.api.post(`${V2}/auth/login`, { login: email, password: user.password })
  assert.equal(byEmail.status, 200)
  assert.notEqual(byEmail.body.data.session_token, byName.body.data.session_token)
  const sessions = await user.api.get(`${V2}/sessions`)
  assert.ok(sessions.body.items.some((s: any) => s.device === 'Pixel 9'))
})

test('a wrong password and an unknown login both answer 401 with the same message', async () => {
  const user = await server.registerUser()
  const wrong = await server.api.post(`${V2}/auth/login`, { login: user.username, password: 'wrong password' })
  const unknown = await server.api.post(`${V2}/auth/login`, { login: uniqueName('nobody'), password: 'whatever1' })
  assert.equal(wrong.status, 401)
  assert.equal(unknown.status, 401)
  assert.equal(wrong.body.error.code, 'unauthorized')
  assert.equal(wrong.body.error.message, unknown.body.error.message)
})

test('login validates its body', async () => {
  const res = await server.api.post(`${V2}/auth/login`, { login: 'someone' })
  assert.equal(res.status, 400)
  assert.equal(res.body.error.code, 'validation_error')
  assert.match(res.body.error.message, /password is required/)
})

test('me without a token, with a garbage token, or a malformed header is 401', async () => {
  for (const headers of [{}, { authorization: 'Bearer nonsense-token-that-does-not-exist' }, { authorization: 'Basic abc' }] as Record<
    string,
    string
  >[]) {
    const res = await server.api.get(`${V2}/auth/me`, { headers })
    assert.equal(res.status, 401)
    assert.equal(res.body.error.code, 'unauthorized')
  }
})

test('logout invalidates only the current token and marks the user offline', async () => {
  const user = await server.registerUser()
  const second = await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  const out = await user.api.post(`${V2}/auth/logout`)
  assert.equal(out.status, 200)
  assert.equal((await user.api.get(`${V2}/auth/me`)).status, 401)
  const other = server.api.as(second.body.data.session_token)
  const me = await other.get(`${V2}/auth/me`)
  assert.equal(me.status, 200)
  assert.equal(me.body.data.is_online, false)
  assert.notEqual(me.body.data.last_seen, null)
})

test('the same auth module answers under /api/auth and the V3 mount', async () => {
  const user = await server.registerUser()
  for (const prefix of ['/api/auth', '/api.v3/api/auth']) {
    const login = await server.api.post(`${prefix}/login`, { login: user.username, password: user.password })
    assert.equal(login.status, 200, prefix)
    const me = await server.api.as(login.body.data.session_token).get(`${prefix}/me`)
    assert.equal(me.body.data.user_id, user.id)
  }
})
