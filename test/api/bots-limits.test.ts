/**
 * Bots' send limits, like Telegram's (BOT_RATE_LIMIT per bot, BOT_CHAT_RATE_LIMIT per personal
 * chat, BOT_GROUP_RATE_LIMIT per group): past one, 429 with parameters.retry_after in Telegram's
 * envelope (Tern's 429 rate_limited with Retry-After on the shared receive endpoint), and nothing
 * is sent. Small limits here; the harness raises them for every other test.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { history, send, V2 } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'

// with TEST_REDIS_URL the harness gives the server Redis: the counters are then Redis's
const server = await startTestServer({ env: { BOT_RATE_LIMIT: '5/60', BOT_CHAT_RATE_LIMIT: '3/60', BOT_GROUP_RATE_LIMIT: '2/60' } })

async function setUp() {
  const [owner, user] = [await server.registerUser(), await server.registerUser()]
  const res = await owner.api.post('/api/bots/register', { name: 'Chatty', username: `${uniqueName('r').slice(0, 24)}_bot` })
  assert.equal(res.status, 200, res.text)
  const bot = res.body.data as { bot_id: number; token: string }
  const first = await send(user, { id: bot.bot_id } as TestUser, 'hi')
  return { owner, user, bot, chatId: first.chat_id as number }
}

async function sendMessage(token: string, params: Record<string, unknown>) {
  const res = await fetch(`${server.url}/bot${token}/sendMessage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  })
  return { status: res.status, body: await res.json() }
}

test('a personal chat takes BOT_CHAT_RATE_LIMIT messages per window; then 429 with retry_after, and nothing is sent', async () => {
  const { user, bot, chatId } = await setUp()
  for (let i = 0; i < 3; i++) assert.equal((await sendMessage(bot.token, { chat_id: user.id, text: `m${i}` })).status, 200)
  const over = await sendMessage(bot.token, { chat_id: user.id, text: 'too many' })
  assert.equal(over.status, 429, JSON.stringify(over.body))
  assert.equal(over.body.ok, false)
  assert.equal(over.body.error_code, 429)
  assert.match(over.body.description, /Too Many Requests: retry after \d+/)
  assert.ok(over.body.parameters.retry_after >= 1 && over.body.parameters.retry_after <= 60)
  const contents = (await history(user, chatId)).map((m) => m.content)
  assert.deepEqual(contents, ['m2', 'm1', 'm0', 'hi'])
  // a bridge's retry of a message already sent is answered without counting (positive control beside the 429)
  const other = await setUp()
  const first = await sendMessage(other.bot.token, { chat_id: other.user.id, text: 'bridged', external_message_id: 'e1' })
  for (let i = 0; i < 4; i++) {
    const again = await sendMessage(other.bot.token, { chat_id: other.user.id, text: 'bridged', external_message_id: 'e1' })
    assert.equal(again.status, 200)
    assert.equal(again.body.result.message_id, first.body.result.message_id)
  }
})

test("a group takes BOT_GROUP_RATE_LIMIT; the bot over all chats BOT_RATE_LIMIT; the shared receive endpoint answers 429 in Tern's envelope", async () => {
  const { user, bot } = await setUp()
  const group = (await user.api.post(`${V2}/groups/create`, { title: 'Busy' })).body.data
  assert.equal((await user.api.post(`${V2}/groups/add-member`, { chat_id: group.group_id, user_id: bot.bot_id })).status, 200)
  for (let i = 0; i < 2; i++) assert.equal((await sendMessage(bot.token, { chat_id: -group.group_id, text: `g${i}` })).status, 200)
  assert.equal((await sendMessage(bot.token, { chat_id: -group.group_id, text: 'g2' })).status, 429)
  // the personal chat still has room, until the bot's own limit (5) is used up: 2 in the group + 3 here
  for (let i = 0; i < 3; i++) assert.equal((await sendMessage(bot.token, { chat_id: user.id, text: `p${i}` })).status, 200)
  const second = await server.registerUser()
  await send(second, { id: bot.bot_id } as TestUser, 'hello')
  const overBot = await sendMessage(bot.token, { chat_id: second.id, text: 'fresh chat, but the bot is over its limit' })
  assert.equal(overBot.status, 429)
  assert.ok(overBot.body.parameters.retry_after >= 1)

  const personal = (await send(user, { id: bot.bot_id } as TestUser, 'ping')).chat_id
  const receive = await fetch(`${server.url}/api/bots/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bot.token}` },
    body: JSON.stringify({ chat_id: personal, text: 'via receive' }),
  })
  assert.equal(receive.status, 429)
  assert.ok(Number(receive.headers.get('retry-after')) >= 1)
  assert.equal((await receive.json()).error.code, 'rate_limited')
  assert.ok(!(await history(user, personal)).some((m) => m.content === 'via receive'))
})
