/**
 * The common send path (SQLite's fast path, messages/posting-sqlite.ts; PostgreSQL's batches,
 * posting-pg.ts) and the general path (posting.ts) are one set of rules: the same conversation,
 * sent through a server with the common path and one with SEND_FAST_PATH=off, at the same
 * instants, leaves the same rows (messages, chats, members, update logs, chat logs, pending
 * messages), gets the same answers and delivers the same frames.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import test from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { commonSendPath as fastPath } from '../../src/modules/messages/service.js'
import { V2 } from '../harness/messaging.js'
import { rowsOf, ScriptClock } from '../harness/parity.js'
import { startTestServer, type TestServer } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const TABLES = ['messages', 'chats', 'chat_members', 'chat_events', 'scheduled_messages'] as const

/** Runs the conversation on one server; returns every answer and every frame, in order. */
async function converse(server: TestServer, clock: ScriptClock, names: string[]) {
  const answers: unknown[] = []
  const tick = () => (clock.at += 1000)
  const register = async (username: string) => {
    tick()
    const res = await server.api.post(`${V2}/auth/register`, { username, password: 'correct horse battery' })
    assert.equal(res.status, 201, res.text)
    return {
      id: res.body.data.user.user_id as number,
      token: res.body.data.session_token as string,
      api: server.api.as(res.body.data.session_token),
    }
  }
  const [alice, bob, carol] = [await register(names[0]), await register(names[1]), await register(names[2])]
  const sockets = [await TestSocket.connect(server.url, alice.token), await TestSocket.connect(server.url, bob.token)]
  const say = async (from: typeof alice, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    tick()
    const res = await from.api.post(`${V2}/messages/send`, body, { headers })
    answers.push({ status: res.status, body: res.body })
    // delivery stamps (delivered_at) land within 20 ms of the frame: let them, before time moves on
    await sleep(60)
    return res.body.data
  }

  const opening = await say(alice, { receiver_id: bob.id, content: 'hi bob' }) // a new pair
  const chatId = opening.chat_id
  await say(alice, { chat_id: chatId, content: 'second' })
  await say(alice, { receiver_id: bob.id, content: 'third, by receiver' })
  const reply = await say(bob, { chat_id: chatId, content: 'hi alice', reply_to_id: opening.message_id }) // reads alice's first
  await say(bob, { chat_id: chatId, content: 'and again' })
  await say(alice, { chat_id: chatId, content: 'reply to a reply', reply_to_id: reply.message_id })
  await say(alice, { chat_id: chatId, content: 'once', client_message_id: 'k-1' })
  await say(alice, { chat_id: chatId, content: 'once', client_message_id: 'k-1' }) // a retry: the first message
  await say(alice, { chat_id: chatId, content: 'other text', client_message_id: 'k-1' }) // 409
  await say(alice, { chat_id: chatId, content: 'by header' }, { 'idempotency-key': 'k-2' })
  await say(alice, { chat_id: chatId, content: 'by header' }, { 'idempotency-key': 'k-2' })
  await say(alice, { receiver_id: alice.id, content: 'note to self' }) // Saved Messages
  await say(alice, { receiver_id: alice.id, content: 'another note' })
  await say(alice, { chat_id: chatId, content: '', emoji: '🎉', emoji_size: 64, emoji_count: 3 })
  await say(alice, { chat_id: chatId, is_encrypted: true, encrypted_content: 'Y2lwaGVy', encryption_key_id: 'key-1' })
  await say(alice, { chat_id: chatId, content: 'a reply across chats', reply_to_id: 999_999 }) // 400
  await say(alice, { chat_id: chatId, content: 'scheduled in the past', scheduled_at: '2020-01-01T00:00:00Z' }) // sent at once
  await say(bob, { chat_id: chatId, content: 'x'.repeat(4096) })
  await say(carol, { receiver_id: alice.id, content: 'hello from carol' })
  tick()
  assert.equal((await alice.api.post(`${V2}/block`, { user_id: carol.id })).status, 200)
  const carolChat = (answers.at(-1) as { body: { data: { chat_id: number } } }).body.data.chat_id
  await say(carol, { chat_id: carolChat, content: 'blocked' }) // 403
  await say(carol, { receiver_id: alice.id, content: 'blocked too' }) // 403
  await say(bob, { chat_id: carolChat, content: 'not my chat' }) // 403/404
  await say(alice, { chat_id: chatId, content: 'last' })
  await sleep(100)
  return { answers, frames: sockets.map((socket) => socket.received) }
}

test('one conversation through the fast path and through the general path: the same rows, answers and frames', async () => {
  const clocks = [new ScriptClock(), new ScriptClock()]
  const fast = await startTestServer({ clock: clocks[0] })
  const general = await startTestServer({ clock: clocks[1], env: { SEND_FAST_PATH: 'off' } })
  assert.equal(fastPath(general.ctx), null, 'SEND_FAST_PATH=off turns the fast path off')

  // Count the sends the fast path itself completed: without them this test would compare the general path with itself.
  let fastSends = 0
  const path = fastPath(fast.ctx)
  if (path) {
    const send = path.send
    path.send = async (...args) => {
      const outcome = await send(...args)
      if (outcome.kind !== 'general') fastSends++
      return outcome
    }
  }

  const prefix = randomBytes(3).toString('hex')
  const names = ['alice', 'bob', 'carol'].map((name) => `${name}_${prefix}`)
  const a = await converse(fast, clocks[0], names)
  const b = await converse(general, clocks[1], names)

  assert.ok(
    fastSends >= 10,
    `the ${fast.ctx.dialect === 'sqlite' ? 'fast' : 'batch'} path handled ${fastSends} sends (expected at least 10)`,
  )

  assert.deepEqual(a.answers, b.answers)
  assert.deepEqual(a.frames, b.frames)
  assert.ok(a.frames[1].filter((frame) => frame.type === 'message.new').length >= 10, 'bob received the conversation')
  const [rowsA, rowsB] = [await rowsOf(fast, TABLES), await rowsOf(general, TABLES)]
  for (const table of Object.keys(rowsA)) assert.deepEqual(rowsA[table], rowsB[table], `${table} rows agree`)
  assert.ok(rowsA.messages.length >= 15, 'the messages were written')
  assert.ok(rowsA.updates.length >= 30, 'the update logs were written')
})
