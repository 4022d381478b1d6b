/**
 * The comparison of test/conformance/verify.ts, on logs made up here: the positive control of the
 * conformance run (a check that finds nothing must be one that would find a lost, doubled,
 * reordered or altered event, and a state that differs from the history).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Logged } from './client.js'
import { compareLogs, stable, stateOf } from './verify.js'

const client = { index: 3, userId: 7 }
const message = (seq: number, id: number, content = `m${id}`): Logged => ({
  type: 'message.new',
  seq,
  data: { message: { message_id: id, chat_id: 12, sender_id: 8, client_message_id: null, content, edited_at: null, reactions: {} } },
})
const reaction = (seq: number, id: number, reactions: Record<string, number>): Logged => ({ type: 'reaction.updated', seq, data: { chat_id: 12, message_id: id, reactions } })
const server = [message(1, 100), message(2, 101), reaction(3, 100, { '👍': 1 }), message(4, 102)]

test('the same log is no divergence, whatever the key order of the data (PostgreSQL jsonb)', () => {
  const reordered = server.map((e) => (e.type === 'reaction.updated' ? { ...e, data: { reactions: e.data.reactions, message_id: e.data.message_id, chat_id: e.data.chat_id } } : e))
  assert.notEqual(JSON.stringify(reordered), JSON.stringify(server))
  assert.equal(stable(reordered), stable(server))
  assert.equal(compareLogs(client, 'user log', server, reordered, null), null)
})

test('a lost, doubled, reordered or altered event is the first divergence, at its index, with its chat', () => {
  const lost = compareLogs(client, 'user log', server, [server[0], server[2], server[3]], null)
  assert.deepEqual([lost?.index, lost?.chatId, lost?.client, lost?.userId], [1, 12, 3, 7])
  assert.equal(lost?.expected, server[1])
  const doubled = compareLogs(client, 'user log', server, [server[0], server[1], server[1], server[2], server[3]], null)
  assert.equal(doubled?.index, 2)
  const reordered = compareLogs(client, 'user log', server, [server[1], server[0], server[2], server[3]], null)
  assert.equal(reordered?.index, 0)
  const altered = compareLogs(client, 'user log', server, [server[0], server[1], reaction(3, 100, { '👍': 2 }), server[3]], null)
  assert.equal(altered?.index, 2)
  const short = compareLogs(client, 'user log', server, server.slice(0, 3), null)
  assert.deepEqual([short?.index, short?.got], [3, '(nothing: missing on the client)'])
  const extra = compareLogs(client, 'user log', server.slice(0, 3), server, null)
  assert.equal(extra?.index, 3)
})

test('a replayed message.new (the message as it is now) is the same event as the live one', () => {
  const replayed = message(1, 100, 'edited later')
  replayed.data.message.reactions = { '👍': 1 }
  assert.equal(compareLogs(client, 'user log', [replayed], [message(1, 100)], null), null)
})

test('the state: edits, reactions and deletions applied in order; deleted and hidden messages gone', () => {
  const log: Logged[] = [
    ...server,
    { type: 'message.edited', seq: 5, data: { message: { ...message(0, 101).data.message, content: 'new text', edited_at: '2026-01-01T00:00:00Z', reactions: { '🔥': 1 } } } },
    { type: 'message.deleted', seq: 6, data: { chat_id: 12, message_id: 102, deleted_for_all: true } },
  ]
  const state = stateOf({ userLog: log, chatLogs: new Map() }).get(12)!
  assert.deepEqual([...state.keys()], [100, 101])
  assert.deepEqual(state.get(100), { content: 'm100', edited: false, reactions: { '👍': 1 } })
  assert.deepEqual(state.get(101), { content: 'new text', edited: true, reactions: { '🔥': 1 } })
  const hidden = stateOf({ userLog: [...log, { type: 'message.deleted', seq: 7, data: { chat_id: 12, message_id: 100, deleted_for_all: false } }], chatLogs: new Map() }).get(12)!
  assert.deepEqual([...hidden.keys()], [101])
})
