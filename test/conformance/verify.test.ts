/**
 * The comparison of test/conformance/verify.ts, on logs made up here: the positive control of the
 * conformance run (a check that finds nothing must be one that would find a lost, doubled,
 * reordered or altered event, and a state that differs from the history, read state included).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Logged } from './client.js'
import { compareLogs, compareState, stable, stateOf, type MessageState } from './verify.js'

const client = { index: 3, userId: 7 }
/** a message.new of personal chat 12 (users 7 and 8) or, with receiver null, of a group */
const message = (seq: number, id: number, content = `m${id}`, from = { chat: 12, sender: 8, receiver: 7 as number | null }): Logged => ({
  type: 'message.new',
  seq,
  data: {
    message: {
      message_id: id,
      chat_id: from.chat,
      sender_id: from.sender,
      receiver_id: from.receiver,
      client_message_id: null,
      content,
      edited_at: null,
      reactions: {},
      is_read: false,
      read_at: null,
      delivered_at: null,
    },
  },
})
const receipt = (seq: number, chatId: number, readerId: number, messageId: number, readAt: string): Logged => ({
  type: 'message.read',
  seq,
  data: { chat_id: chatId, reader_id: readerId, message_id: messageId, read_at: readAt },
})
const unread = { is_read: false, read_at: null, delivered_at: null }
const reaction = (seq: number, id: number, reactions: Record<string, number>): Logged => ({
  type: 'reaction.updated',
  seq,
  data: { chat_id: 12, message_id: id, reactions },
})
const server = [message(1, 100), message(2, 101), reaction(3, 100, { '👍': 1 }), message(4, 102)]

test('the same log is no divergence, whatever the key order of the data (PostgreSQL jsonb)', () => {
  const reordered = server.map((e) =>
    e.type === 'reaction.updated'
      ? { ...e, data: { reactions: e.data.reactions, message_id: e.data.message_id, chat_id: e.data.chat_id } }
      : e,
  )
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
    {
      type: 'message.edited',
      seq: 5,
      data: {
        message: { ...message(0, 101).data.message, content: 'new text', edited_at: '2026-01-01T00:00:00Z', reactions: { '🔥': 1 } },
      },
    },
    { type: 'message.deleted', seq: 6, data: { chat_id: 12, message_id: 102, deleted_for_all: true } },
  ]
  const state = stateOf({ userId: 7, userLog: log, chatLogs: new Map() }).get(12)!
  assert.deepEqual([...state.keys()], [100, 101])
  assert.deepEqual(state.get(100), { content: 'm100', edited: false, reactions: { '👍': 1 }, ...unread })
  assert.deepEqual(state.get(101), { content: 'new text', edited: true, reactions: { '🔥': 1 }, ...unread })
  const hidden = stateOf({
    userId: 7,
    userLog: [...log, { type: 'message.deleted', seq: 7, data: { chat_id: 12, message_id: 100, deleted_for_all: false } }],
    chatLogs: new Map(),
  }).get(12)!
  assert.deepEqual([...hidden.keys()], [101])
})

// Read state. Times of the receipts:
const T1 = '2026-01-01T00:00:01.000Z'
const T2 = '2026-01-01T00:00:02.000Z'
/** the server's history of a chat, newest first as it pages it */
const historyOf = (entries: [number, Partial<MessageState>][]) =>
  new Map(
    entries.map(([id, state]): [number, MessageState] => [id, { content: `m${id}`, edited: false, reactions: {}, ...unread, ...state }]),
  )
const mine = { chat: 12, sender: 7, receiver: 8 }

// personal chat 12: 100 and 101 from user 8, read by me (7) up to 101 at T1; then my 102, read by 8
// at T2; then 103 from 8, which nobody read (8's own receipt does not read 8's message)
const personalLog: Logged[] = [
  message(1, 100),
  message(2, 101),
  receipt(3, 12, 7, 101, T1),
  message(4, 102, 'm102', mine),
  message(5, 103),
  receipt(6, 12, 8, 103, T2),
]
const personalHistory = historyOf([
  [103, {}],
  [102, { is_read: true, read_at: T2 }],
  [101, { is_read: true, read_at: T1 }],
  [100, { is_read: true, read_at: T1 }],
])

test('read state in a personal chat: each message read at the first receipt of the other member that reaches it, equal to the history', () => {
  const state = stateOf({ userId: 7, userLog: personalLog, chatLogs: new Map() }).get(12)!
  assert.deepEqual(
    [100, 101, 102, 103].map((id) => [state.get(id)!.is_read, state.get(id)!.read_at]),
    [
      [true, T1],
      [true, T1],
      [true, T2],
      [false, null],
    ],
  )
  // the positive control: the same read state is no divergence
  assert.equal(compareState(client, 12, personalHistory, state, true), null)
})

test('a client that missed a read differs from the history at the first message that read would have read', () => {
  const missed = personalLog.filter((event) => !(event.type === 'message.read' && event.data.reader_id === 7))
  const d = compareState(client, 12, personalHistory, stateOf({ userId: 7, userLog: missed, chatLogs: new Map() }).get(12)!, true)
  assert.deepEqual([d?.client, d?.userId, d?.chatId, d?.where], [3, 7, 12, 'chat 12 history (is_read, read_at)'])
  assert.deepEqual(d?.expected, {
    message_id: 101,
    content: 'm101',
    edited: false,
    reactions: {},
    is_read: true,
    read_at: T1,
    delivered_at: null,
  })
  assert.deepEqual(d?.got, {
    message_id: 101,
    content: 'm101',
    edited: false,
    reactions: {},
    is_read: false,
    read_at: null,
    delivered_at: null,
  })
  // a receipt that says another time, or a read the server does not have, is found as well
  const late = personalLog.map((event) =>
    event.type === 'message.read' && event.data.reader_id === 8 ? receipt(6, 12, 8, 103, '2026-01-01T00:00:09.000Z') : event,
  )
  assert.equal(
    compareState(client, 12, personalHistory, stateOf({ userId: 7, userLog: late, chatLogs: new Map() }).get(12)!, true)?.where,
    'chat 12 history (read_at)',
  )
  const extra = [...personalLog, receipt(7, 12, 7, 103, T2)]
  const d2 = compareState(client, 12, personalHistory, stateOf({ userId: 7, userLog: extra, chatLogs: new Map() }).get(12)!, true)
  assert.deepEqual(
    [(d2?.expected as { message_id: number } | undefined)?.message_id, d2?.where],
    [103, 'chat 12 history (is_read, read_at)'],
  )
})

test('a message.new replayed after the read carries its read state; the receipt agrees with it', () => {
  const replayed = message(1, 100)
  Object.assign(replayed.data.message, { is_read: true, read_at: T1, delivered_at: T1 })
  const state = stateOf({ userId: 7, userLog: [replayed, receipt(2, 12, 7, 100, T1)], chatLogs: new Map() }).get(12)!
  assert.deepEqual(state.get(100), { content: 'm100', edited: false, reactions: {}, is_read: true, read_at: T1, delivered_at: T1 })
  assert.equal(compareState(client, 12, historyOf([[100, { is_read: true, read_at: T1, delivered_at: T1 }]]), state, true), null)
  // a delivered_at the client saw must stay the server's (it is stamped once)
  assert.equal(
    compareState(client, 12, historyOf([[100, { is_read: true, read_at: T1, delivered_at: T2 }]]), state, true)?.where,
    'chat 12 history (delivered_at)',
  )
})

test('read state in a group: what my own receipts read must be read; what others read, which I cannot know, is no divergence', () => {
  const group = (sender: number) => ({ chat: 20, sender, receiver: null })
  const chatLog: Logged[] = [200, 201, 202, 203, 204, 205].map((id, i) => ({
    type: 'message.new',
    chat_id: 20,
    chat_seq: i + 1,
    data: message(0, id, `m${id}`, group([8, 9, 7, 8, 9, 8][i])).data,
  }))
  // my receipts (on my own log): up to 201, then up to 204; my message 202 moved my position without one
  const userLog = [receipt(1, 20, 7, 201, T1), receipt(2, 20, 7, 204, T2)]
  const state = stateOf({ userId: 7, userLog, chatLogs: new Map([[20, chatLog]]) }).get(20)!
  assert.deepEqual(
    [200, 201, 202, 203, 204, 205].map((id) => state.get(id)!.is_read),
    [true, true, false, true, true, false],
  )
  // the server: 200–204 read (202, mine, by someone else), 205 not: no divergence
  const history = historyOf([
    [205, {}],
    [204, { is_read: true, read_at: T2 }],
    [203, { is_read: true, read_at: T2 }],
    [202, { is_read: true, read_at: T1 }],
    [201, { is_read: true, read_at: T1 }],
    [200, { is_read: true, read_at: T1 }],
  ])
  assert.equal(compareState(client, 20, history, state, false), null)
  // compared as exactly as a personal chat, the same state would differ: the one-sided rule is what lets it pass
  assert.notEqual(compareState(client, 20, history, state, true), null)
  // a message my receipt read that the server holds unread is the divergence
  const d = compareState(client, 20, new Map([...history, [203, { ...history.get(203)!, is_read: false, read_at: null }]]), state, false)
  assert.deepEqual([(d?.expected as { message_id: number } | undefined)?.message_id, d?.where], [203, 'chat 20 history (is_read)'])
  // only my receipt up to 204: 200 and 201 were passed by my own send, without a receipt, so they are not known read
  const alone = stateOf({ userId: 7, userLog: [receipt(1, 20, 7, 204, T2)], chatLogs: new Map([[20, chatLog]]) }).get(20)!
  assert.deepEqual(
    [200, 201, 203, 204].map((id) => alone.get(id)!.is_read),
    [false, false, true, true],
  )
})
