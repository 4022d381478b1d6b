/**
 * Polls, black-box: created as a message of the chat (history, message.new), votes (single,
 * multiple, replaced, taken back), results with voters unless anonymous, close, live
 * `poll.updated`, the limits at both edges, and outsiders kept out.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { createChannel, createGroup } from '../harness/fixtures.js'
import { history, registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { assertDelivered, TestSocket } from '../harness/socket.js'

const server = await startTestServer()
const users = (n: number) => registerUsers(server, n)

async function groupOf(owner: TestUser, members: TestUser[]) {
  return (await createGroup(owner, { title: 'Poll group', member_ids: members.map((m) => m.id) })).group_id as number
}

async function createPoll(user: TestUser, chatId: number, fields: Record<string, unknown> = {}) {
  const res = await user.api.post(`${V2}/poll/create`, {
    question: 'Lunch?',
    options: ['Pizza', 'Sushi', 'Salad'],
    chat_type: 'group',
    chat_id: chatId,
    ...fields,
  })
  assert.equal(res.status, 200, res.text)
  return res.body.data
}

const vote = (user: TestUser, pollId: number, body: Record<string, unknown>) => user.api.post(`${V2}/poll/${pollId}/vote`, body)
const results = async (user: TestUser, pollId: number) => {
  const res = await user.api.get(`${V2}/poll/${pollId}/results`)
  assert.equal(res.status, 200, res.text)
  return res.body.data
}
const votes = (state: any) => state.options.map((o: any) => o.votes)

test('a poll is posted as a message of its chat: members see it in history and get message.new', async () => {
  const [owner, member] = await users(2)
  const chatId = await groupOf(owner, [member])
  const socket = await TestSocket.connect(server.url, member.token)
  let poll: any
  const [frame] = await assertDelivered(
    socket,
    'message.new',
    async () => (poll = await createPoll(owner, chatId, { question: '  Lunch?  ' })),
  )
  assert.equal(frame.data.message.poll_id, poll.poll_id)
  assert.equal(frame.data.message.content, 'Lunch?')
  assert.deepEqual(
    [
      poll.question,
      poll.options.map((o: any) => o.text),
      votes(poll),
      poll.total_votes,
      poll.closed,
      poll.my_votes,
      poll.is_anonymous,
      poll.is_multiple,
    ],
    ['Lunch?', ['Pizza', 'Sushi', 'Salad'], [0, 0, 0], 0, false, [], true, false],
  )
  const [newest] = await history(member, chatId)
  assert.equal(newest.poll_id, poll.poll_id)
  assert.equal(newest.message_id, poll.message_id)
})

test('votes: one option, a new vote replaces it, [] takes it back; results count people; my_votes is mine', async () => {
  const [owner, a, b] = await users(3)
  const chatId = await groupOf(owner, [a, b])
  const poll = await createPoll(owner, chatId)
  const first = await vote(a, poll.poll_id, { option_index: 0 })
  assert.equal(first.status, 200, first.text)
  assert.deepEqual([votes(first.body.data), first.body.data.my_votes, first.body.data.total_votes], [[1, 0, 0], [0], 1])
  await vote(b, poll.poll_id, { option_index: 0 })
  const changed = await vote(a, poll.poll_id, { option_indexes: [2] })
  assert.deepEqual([votes(changed.body.data), changed.body.data.my_votes], [[1, 0, 1], [2]])
  assert.deepEqual((await results(b, poll.poll_id)).my_votes, [0], "b's own votes")
  assert.deepEqual((await results(owner, poll.poll_id)).my_votes, [])
  const back = await vote(a, poll.poll_id, { option_indexes: [] })
  assert.deepEqual([votes(back.body.data), back.body.data.total_votes, back.body.data.my_votes], [[1, 0, 0], 1, []])
  assertError(await vote(a, poll.poll_id, { option_indexes: [0, 1] }), 400, 'validation_error', 'two options in a single poll')
})

test('multiple: several options at once; total_votes counts voters, not options', async () => {
  const [owner, a, b] = await users(3)
  const chatId = await groupOf(owner, [a, b])
  const poll = await createPoll(owner, chatId, { is_multiple: true })
  const res = await vote(a, poll.poll_id, { option_indexes: [2, 0] })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(
    [votes(res.body.data), res.body.data.my_votes],
    [
      [1, 0, 1],
      [0, 2],
    ],
  )
  await vote(b, poll.poll_id, { option_index: 1 })
  const state = await results(owner, poll.poll_id)
  assert.deepEqual([votes(state), state.total_votes], [[1, 1, 1], 2])
  assertError(await vote(a, poll.poll_id, { option_indexes: [1, 1] }), 400, 'validation_error', 'a repeated option')
})

test('anonymous polls hide the voters; public ones list them', async () => {
  const [owner, a] = await users(2)
  const chatId = await groupOf(owner, [a])
  const hidden = await createPoll(owner, chatId)
  const open = await createPoll(owner, chatId, { is_anonymous: false })
  await vote(a, hidden.poll_id, { option_index: 1 })
  await vote(a, open.poll_id, { option_index: 1 })
  const secret = await results(owner, hidden.poll_id)
  assert.ok(
    secret.options.every((o: any) => !('voters' in o)),
    'no voters in an anonymous poll',
  )
  const listed = await results(owner, open.poll_id)
  assert.deepEqual(
    listed.options.map((o: any) => (o.voters ?? []).map((v: any) => v.user_id)),
    [[], [a.id], []],
  )
  assert.equal(listed.options[1].voters[0].username, a.username)
})

test('poll.updated reaches the chat live with the counts (no one’s own votes)', async () => {
  const [owner, a] = await users(2)
  const chatId = await groupOf(owner, [a])
  const poll = await createPoll(owner, chatId)
  const socket = await TestSocket.connect(server.url, owner.token)
  const [frame] = await assertDelivered(socket, 'poll.updated', () => vote(a, poll.poll_id, { option_index: 2 }))
  assert.deepEqual(votes(frame.data.poll), [0, 0, 1])
  assert.equal(frame.data.poll.poll_id, poll.poll_id)
  assert.ok(!('my_votes' in frame.data.poll))
  const [closed] = await assertDelivered(socket, 'poll.updated', () => owner.api.post(`${V2}/poll/${poll.poll_id}/close`))
  assert.equal(closed.data.poll.closed, true)
})

test('close: the creator or a chat admin; votes after close are refused; closing twice is harmless', async () => {
  const [owner, creator, member] = await users(3)
  const chatId = await groupOf(owner, [creator, member])
  const mine = await createPoll(creator, chatId)
  assertError(await member.api.post(`${V2}/poll/${mine.poll_id}/close`), 403, 'forbidden', 'a plain member')
  const closed = await creator.api.post(`${V2}/poll/${mine.poll_id}/close`)
  assert.equal(closed.status, 200, closed.text)
  assert.equal(closed.body.data.closed, true)
  assertError(await vote(member, mine.poll_id, { option_index: 0 }), 403, 'forbidden', 'closed')
  assert.deepEqual(votes(await results(member, mine.poll_id)), [0, 0, 0], 'nothing counted')
  assert.equal((await creator.api.post(`${V2}/poll/${mine.poll_id}/close`)).status, 200, 'again')

  const other = await createPoll(member, chatId)
  assert.equal((await owner.api.post(`${V2}/poll/${other.poll_id}/close`)).status, 200, 'the group owner may close any poll')
})

test('limits at both edges: 2 and 10 options, 255-character question; empty and repeated options', async () => {
  const [owner] = await users(1)
  const chatId = await groupOf(owner, [])
  const create = (fields: Record<string, unknown>) =>
    owner.api.post(`${V2}/poll/create`, { question: 'Q', options: ['a', 'b'], chat_type: 'group', chat_id: chatId, ...fields })
  const ten = Array.from({ length: 10 }, (_, i) => `option ${i}`)
  assert.equal((await create({ options: ['a', 'b'] })).status, 200, '2 options')
  assert.equal((await create({ options: ten })).status, 200, '10 options')
  assert.equal((await create({ question: 'q'.repeat(255) })).status, 200, '255 characters')
  assertError(await create({ options: ['only'] }), 400, 'validation_error', '1 option')
  assertError(await create({ options: [...ten, 'eleven'] }), 400, 'validation_error', '11 options')
  assertError(await create({ question: 'q'.repeat(256) }), 400, 'validation_error', '256 characters')
  assertError(await create({ question: '' }), 400, 'validation_error', 'empty question')
  assertError(await create({ question: '   ' }), 400, 'validation_error', 'blank question')
  assertError(await create({ options: ['a', '  '] }), 400, 'validation_error', 'blank option')
  assertError(await create({ options: ['a', 'a'] }), 400, 'validation_error', 'the same option twice')
  assertError(await create({ chat_type: 'channel' }), 400, 'validation_error', 'wrong chat_type')
  assertError(await create({ chat_type: 'room' }), 400, 'validation_error', 'unknown chat_type')
  const [newest] = await history(owner, chatId)
  assert.equal(newest.content, 'q'.repeat(255), 'refused polls posted nothing')

  const poll = await createPoll(owner, chatId, { options: ten })
  assert.equal((await vote(owner, poll.poll_id, { option_index: 9 })).status, 200, 'the last option')
  assertError(await vote(owner, poll.poll_id, { option_index: 10 }), 400, 'validation_error', 'past the last option')
  const three = await createPoll(owner, chatId)
  assertError(await vote(owner, three.poll_id, { option_index: 3 }), 400, 'validation_error', 'out of range for this poll')
  assertError(await vote(owner, three.poll_id, { option_index: -1 }), 400, 'validation_error', 'negative')
  assertError(await vote(owner, three.poll_id, {}), 400, 'validation_error', 'no option')
  assertError(await vote(owner, three.poll_id, { option_index: 0, option_indexes: [1] }), 400, 'validation_error', 'both')
})

test('outsiders can neither vote nor read; only those who may post create; channels: subscribers vote', async () => {
  const [owner, member, outsider, a, b] = await users(5)
  const chatId = await groupOf(owner, [member])
  const poll = await createPoll(owner, chatId)
  assertError(await vote(outsider, poll.poll_id, { option_index: 0 }), 404, 'not_found', 'outsider votes')
  assertError(await outsider.api.get(`${V2}/poll/${poll.poll_id}/results`), 404, 'not_found', 'outsider reads')
  assertError(await outsider.api.post(`${V2}/poll/${poll.poll_id}/close`), 404, 'not_found', 'outsider closes')
  assertError(
    await outsider.api.post(`${V2}/poll/create`, { question: 'Q', options: ['a', 'b'], chat_type: 'group', chat_id: chatId }),
    404,
    'not_found',
    'outsider posts',
  )
  assertError(await member.api.get(`${V2}/poll/987654321/results`), 404, 'not_found', 'no such poll')
  assertError(await member.api.get(`${V2}/poll/abc/results`), 400, 'validation_error', 'not an id')
  assert.equal((await vote(member, poll.poll_id, { option_index: 0 })).status, 200, 'a member votes (control)')

  const channel = await createChannel(owner, {}, [a])
  const channelPoll = await createPoll(owner, channel.channel_id, { chat_type: 'channel' })
  assert.equal((await vote(a, channelPoll.poll_id, { option_index: 1 })).status, 200, 'a subscriber votes')
  assertError(
    await a.api.post(`${V2}/poll/create`, { question: 'Q', options: ['a', 'b'], chat_type: 'channel', chat_id: channel.channel_id }),
    403,
    'forbidden',
    'a subscriber cannot post',
  )

  // a personal chat works too; a poll deleted for everyone is gone
  const chat = (await send(a, b, 'hi')).chat_id
  const personal = await createPoll(a, chat, { chat_type: 'personal' })
  assert.equal((await vote(b, personal.poll_id, { option_index: 0 })).status, 200)
  assert.equal((await a.api.delete(`${V2}/messages/${personal.message_id}`, { query: { for_all: 'true' } })).status, 200)
  assertError(await b.api.get(`${V2}/poll/${personal.poll_id}/results`), 404, 'not_found', 'its message was deleted for everyone')
  assert.equal((await server.api.get(`${V2}/poll/${poll.poll_id}/results`)).status, 401)
})
