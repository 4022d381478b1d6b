/** The update log keeps the newest UPDATE_LOG_KEEP updates per user; older resumes are told to reset. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestServer } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const server = await startTestServer({ env: { UPDATE_LOG_KEEP: '10' } })
const V2 = '/api.v2/api'

test('only the newest updates are kept; GET updates says reset when the asked range was pruned', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  for (let i = 1; i <= 15; i++) await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: `n${i}` })
  const all = await bob.api.get(`${V2}/updates`, { query: { since: 0, limit: 100 } })
  assert.equal(all.status, 200)
  assert.deepEqual(
    all.body.data.updates.map((u: { seq: number }) => u.seq),
    [6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  )
  assert.equal(all.body.data.seq, 15)
  assert.equal(all.body.data.reset, true, 'seqs 1–5 are gone: the client must reload')
  const recent = await bob.api.get(`${V2}/updates`, { query: { since: 5, limit: 100 } })
  assert.equal(recent.body.data.reset, false, 'nothing after 5 was pruned')
  assert.equal(recent.body.data.updates.length, 10)
})

test('a WebSocket resume from a pruned seq gets a reset frame, then everything kept, in order', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  for (let i = 1; i <= 15; i++) await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: `n${i}` })
  const socket = await TestSocket.connect(server.url, bob.token)
  socket.send({ type: 'resume', seq: 2 })
  const reset = await socket.next('reset')
  assert.deepEqual(reset.data, { reason: 'pruned', missed_from: 3, missed_to: 5 })
  const replayed = [] as number[]
  for (let i = 0; i < 10; i++) replayed.push((await socket.next('message.new')).seq!)
  assert.deepEqual(replayed, [6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
  // a resume inside the kept range needs no reset
  socket.send({ type: 'resume', seq: 12 })
  for (let i = 0; i < 3; i++) await socket.next('message.new')
  assert.deepEqual(await socket.drain('reset', 200), [])
})

test("a group's own log keeps its newest events too: a chat resume from before them gets a reset naming the chat", async () => {
  const [owner, member] = [await server.registerUser(), await server.registerUser()]
  const created = await owner.api.post(`${V2}/groups/create`, { title: 'Busy', member_ids: [member.id] })
  const chatId = created.body.data.group_id
  // creation logged two member.joined events (seqs 1 and 2); 13 posts take it to 15
  for (let i = 1; i <= 13; i++) await owner.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `g${i}` })
  const log = await member.api.get(`${V2}/chat/updates`, { query: { chat_id: chatId, since: 0 } })
  assert.equal(log.status, 200, log.text)
  assert.deepEqual(
    log.body.data.updates.map((u: { chat_seq: number }) => u.chat_seq),
    [6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  )
  assert.equal(log.body.data.reset, true)
  assert.equal(log.body.data.chat_seq, 15)

  const socket = await TestSocket.connect(server.url, member.token)
  socket.send({ type: 'resume', chats: { [chatId]: 2 } })
  const reset = await socket.next('reset')
  assert.deepEqual(reset.data, { chat_id: chatId, reason: 'pruned', missed_from: 3, missed_to: 5 })
  const replayed = [] as number[]
  for (let i = 0; i < 10; i++) replayed.push(((await socket.next('message.new')) as { chat_seq?: number }).chat_seq!)
  assert.deepEqual(replayed, [6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
})
