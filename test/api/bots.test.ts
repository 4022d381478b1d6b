/**
 * Bot apps: registering a bot (its account, its token once), replacing the
 * token, listing my bots, the cap per owner, and commands; every refusal beside its positive control.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { V2 } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'

const server = await startTestServer()

const botName = () => `${uniqueName('b').slice(0, 24)}_bot`

async function registerBot(owner: TestUser, fields: Record<string, unknown> = {}) {
  const res = await owner.api.post('/api/bots/register', { name: 'Helper', username: botName(), ...fields })
  assert.equal(res.status, 200, res.text)
  return res.body.data as { bot_id: number; token: string; username: string }
}

const getMe = (token: string) => server.api.post(`/bot${token}/getMe`, {})

test('registering a bot answers its id and a token <bot_id>:<secret> once; the bot is a user marked is_bot', async () => {
  const owner = await server.registerUser()
  const username = botName()
  const res = await owner.api.post('/api/bots/register', {
    name: 'Weather',
    username,
    description: 'Tells the weather',
    allowed_commands: ['start', 'help'],
  })
  assert.equal(res.status, 200, res.text)
  const bot = res.body.data
  assert.equal(bot.username, username)
  assert.equal(bot.name, 'Weather')
  assert.equal(bot.description, 'Tells the weather')
  assert.deepEqual(bot.allowed_commands, ['start', 'help'])
  const [id, secret] = bot.token.split(':')
  assert.equal(Number(id), bot.bot_id)
  assert.ok(Buffer.from(secret, 'base64url').length >= 32, 'at least 32 random bytes')

  // a user like any other, shown as a bot
  const profile = await owner.api.get(`${V2}/profile/${username}`)
  assert.equal(profile.status, 200, profile.text)
  assert.equal(profile.body.data.user_id, bot.bot_id)
  assert.equal(profile.body.data.is_bot, true)

  // the token works on the Bot API
  const me = await getMe(bot.token)
  assert.equal(me.status, 200, me.text)
  assert.deepEqual(
    { id: me.body.result.id, is_bot: me.body.result.is_bot, username: me.body.result.username, first_name: me.body.result.first_name },
    { id: bot.bot_id, is_bot: true, username, first_name: 'Weather' },
  )
})

test('the token is stored only as its SHA-256, and is never shown again', async () => {
  const owner = await server.registerUser()
  const bot = await registerBot(owner)
  const row = await server.ctx.db.selectFrom('bot_apps').selectAll().where('bot_id', '=', bot.bot_id).executeTakeFirstOrThrow()
  assert.equal(row.token_hash, createHash('sha256').update(bot.token).digest('hex'))
  assert.ok(!JSON.stringify(row).includes(bot.token.split(':')[1]))
  const mine = await owner.api.get('/api/bots/me')
  assert.equal(mine.status, 200)
  assert.ok(!mine.text.includes(bot.token.split(':')[1]))
  assert.equal(mine.body.items.length, 1)
  assert.equal(mine.body.items[0].bot_id, bot.bot_id)
  assert.equal('token' in mine.body.items[0], false)
})

test('a bot cannot sign in: it has no password', async () => {
  const owner = await server.registerUser()
  const bot = await registerBot(owner)
  for (const password of ['', 'correct horse battery', bot.token]) {
    const res = await server.api.post(`${V2}/auth/login`, { login: bot.username, password: password || 'x'.repeat(8) })
    assert.equal(res.status, 401, res.text)
  }
  // positive control: the owner signs in
  const ok = await server.api.post(`${V2}/auth/login`, { login: owner.username, password: owner.password })
  assert.equal(ok.status, 200)
})

test('a username must be 5–32 letters, digits or underscores ending in "bot", and unique among all users', async () => {
  const owner = await server.registerUser()
  for (const username of ['abot', 'weather', 'weather_bo', 'wea-ther_bot', `${'x'.repeat(30)}bot`, 'wé_bot', '__proto__']) {
    const res = await owner.api.post('/api/bots/register', { name: 'X', username })
    assert.equal(res.status, 400, `${username}: ${res.text}`)
    assert.equal(res.body.error.code, 'validation_error')
  }
  // positive controls: the shortest, the longest, and any case of "bot"
  for (const username of ['ab' + 'bot', `${'x'.repeat(29)}bot`, `${uniqueName('c').slice(0, 10)}_BoT`]) {
    const res = await owner.api.post('/api/bots/register', {
      name: 'X',
      username: username === 'abbot' ? `${uniqueName('q').slice(0, 2)}bot` : username,
    })
    assert.equal(res.status, 200, `${username}: ${res.text}`)
  }
  // taken by a person, by another bot (in any case), or reserved
  const person = await server.registerUser({ username: `${uniqueName('p').slice(0, 20)}bot` })
  const bot = await registerBot(owner)
  for (const username of [person.username, bot.username.toUpperCase()]) {
    const res = await owner.api.post('/api/bots/register', { name: 'X', username })
    assert.equal(res.status, 409, res.text)
    assert.equal(res.body.error.code, 'conflict')
  }
  // and a person cannot take a bot's name either
  const taken = await server.api.post(`${V2}/auth/register`, { username: bot.username, password: 'correct horse battery' })
  assert.equal(taken.status, 409)
})

test('register refuses a bad body: no name, unknown fields are dropped, bad command names', async () => {
  const owner = await server.registerUser()
  const bad = [
    { username: botName() },
    { name: '', username: botName() },
    { name: 'x'.repeat(65), username: botName() },
    { name: 'X', username: botName(), allowed_commands: ['Start'] },
    { name: 'X', username: botName(), allowed_commands: ['a'.repeat(33)] },
    { name: 'X', username: botName(), allowed_commands: 'start' },
    { name: 'X', username: botName(), description: 'x'.repeat(513) },
    { name: 5, username: botName() },
  ]
  for (const body of bad) {
    const res = await owner.api.post('/api/bots/register', body)
    assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${res.text}`)
    assert.equal(res.body.error.code, 'validation_error')
  }
  const ok = await owner.api.post('/api/bots/register', {
    name: 'X',
    username: botName(),
    allowed_commands: ['start', 'a'.repeat(32)],
    is_admin: 1,
  })
  assert.equal(ok.status, 200, ok.text)
})

test('/api/bots needs a session: 401 without one, and a bot token is not a session', async () => {
  const owner = await server.registerUser()
  const bot = await registerBot(owner)
  for (const [method, path] of [
    ['POST', '/api/bots/register'],
    ['GET', '/api/bots/me'],
    ['POST', `/api/bots/${bot.bot_id}/token`],
    ['POST', `/api/bots/${bot.bot_id}/command`],
  ] as const) {
    for (const token of [null, bot.token, 'junk']) {
      const res = await server.api
        .as(token)
        .request(method, path, method === 'POST' ? { name: 'X', username: botName(), command: 'x', description: 'y' } : undefined)
      assert.equal(res.status, 401, `${method} ${path} with ${token ? 'a token' : 'none'}: ${res.text}`)
      assert.equal(res.body.error.code, 'unauthorized')
    }
  }
})

test('a new token replaces the old one at once; only the owner may ask for it', async () => {
  const [owner, other] = [await server.registerUser(), await server.registerUser()]
  const bot = await registerBot(owner)
  const stranger = await other.api.post(`/api/bots/${bot.bot_id}/token`)
  assert.equal(stranger.status, 404, stranger.text)
  assert.equal((await getMe(bot.token)).status, 200, 'the stranger changed nothing')

  const res = await owner.api.post(`/api/bots/${bot.bot_id}/token`)
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.data.bot_id, bot.bot_id)
  assert.notEqual(res.body.data.token, bot.token)
  assert.ok(res.body.data.token.startsWith(`${bot.bot_id}:`))
  const old = await getMe(bot.token)
  assert.equal(old.status, 401)
  assert.deepEqual(old.body, { ok: false, error_code: 401, description: 'Unauthorized' })
  assert.equal((await getMe(res.body.data.token)).status, 200)

  for (const id of ['0', '99999999', 'abc', '-1']) {
    const missing = await owner.api.post(`/api/bots/${id}/token`)
    assert.ok([400, 404].includes(missing.status), `${id}: ${missing.text}`)
    assert.equal(missing.body.success, false)
  }
  // another user's id that is no bot
  assert.equal((await owner.api.post(`/api/bots/${other.id}/token`)).status, 404)
})

test('an owner has at most 20 bots: the 21st is refused with 409 and a clear message', async () => {
  const owner = await server.registerUser()
  await Promise.all(Array.from({ length: 20 }, () => registerBot(owner)))
  const res = await owner.api.post('/api/bots/register', { name: 'One more', username: botName() })
  assert.equal(res.status, 409, res.text)
  assert.match(res.body.error.message, /20 bots/)
  assert.equal((await owner.api.get('/api/bots/me')).body.items.length, 20)
  // someone else still may
  await registerBot(await server.registerUser())
})

test('the cap holds under concurrency: of 25 registrations at once, exactly 20 succeed', async () => {
  const owner = await server.registerUser()
  const results = await Promise.all(
    Array.from({ length: 25 }, () => owner.api.post('/api/bots/register', { name: 'Racer', username: botName() })),
  )
  const statuses = results.map((r) => r.status).sort()
  assert.deepEqual(statuses, [...Array(20).fill(200), ...Array(5).fill(409)])
  assert.equal((await owner.api.get('/api/bots/me')).body.items.length, 20)
})

test('GET /api/bots/me lists only my bots', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const a1 = await registerBot(alice)
  const a2 = await registerBot(alice)
  await registerBot(bob)
  const res = await alice.api.get('/api/bots/me')
  assert.equal(res.status, 200)
  assert.deepEqual(
    res.body.items.map((b: any) => b.bot_id),
    [a1.bot_id, a2.bot_id],
  )
  const none = await (await server.registerUser()).api.get('/api/bots/me')
  assert.deepEqual(none.body.items, [])
})

test('commands: the owner defines and updates one; others and bad names are refused', async () => {
  const [owner, other] = [await server.registerUser(), await server.registerUser()]
  const bot = await registerBot(owner)
  const res = await owner.api.post(`/api/bots/${bot.bot_id}/command`, {
    command: 'weather',
    description: 'The weather now',
    handler: 'https://example.com/h',
  })
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.data.command, 'weather')
  assert.equal(res.body.data.description, 'The weather now')
  assert.equal(res.body.data.handler, 'https://example.com/h')
  const updated = await owner.api.post(`/api/bots/${bot.bot_id}/command`, { command: 'weather', description: 'Updated' })
  assert.equal(updated.status, 200)
  assert.equal(updated.body.data.description, 'Updated')
  assert.equal(updated.body.data.handler, null)
  // the Bot API sees the same list
  const listed = await server.api.post(`/bot${bot.token}/getMyCommands`, {})
  assert.deepEqual(listed.body.result, [{ command: 'weather', description: 'Updated' }])

  const stranger = await other.api.post(`/api/bots/${bot.bot_id}/command`, { command: 'evil', description: 'x' })
  assert.equal(stranger.status, 404)
  for (const command of ['', 'Weather', 'a'.repeat(33), 'we ather', '/start', 'wéather', '__proto__x-']) {
    const bad = await owner.api.post(`/api/bots/${bot.bot_id}/command`, { command, description: 'x' })
    assert.equal(bad.status, 400, `${command}: ${bad.text}`)
  }
  assert.equal((await owner.api.post(`/api/bots/${bot.bot_id}/command`, { command: 'x' })).status, 400)
  assert.equal((await owner.api.post(`/api/bots/${bot.bot_id}/command`, { command: 'x', description: '' })).status, 400)
  assert.equal((await owner.api.post(`/api/bots/${bot.bot_id}/command`, { command: 'a'.repeat(32), description: 'longest' })).status, 200)
  const after = await server.api.post(`/bot${bot.token}/getMyCommands`, {})
  assert.deepEqual(after.body.result.map((c: any) => c.command).sort(), ['a'.repeat(32), 'weather'])
})
