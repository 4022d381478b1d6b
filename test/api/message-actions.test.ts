import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { history, ISO, registerUsers, send, updates, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const server = await startTestServer()
const users = (n: number, fields: { display_name?: string }[] = []) => registerUsers(server, n, fields)

const contents = async (user: TestUser, chatId: number) => (await history(user, chatId)).map((m) => m.content)

async function chatItem(user: TestUser, chatId: number) {
  const res = await user.api.get(`${V2}/chat_list`, { query: { per_page: 100 } })
  assert.equal(res.status, 200, res.text)
  return res.body.items.find((i: any) => i.chat_id === chatId)
}

const updatesOf = async (user: TestUser, type: string) => (await updates(user)).items.filter((u) => u.type === type)
const seqOf = async (user: TestUser) => (await updates(user)).seq

const createChat = async (user: TestUser, other: TestUser) =>
  (await user.api.post(`${V2}/chat/create`, { user_id: other.id })).body.data.chat_id as number

const del = (user: TestUser, id: number, query: Record<string, string | boolean> = {}) => user.api.delete(`${V2}/messages/${id}`, { query })

// ---------------------------------------------------------------- 1. delete

test('V2 messages carry read_at and delivered_at (null on a fresh send)', async () => {
  const [alice, bob] = await users(2)
  const m = await send(alice, bob, 'fields')
  assert.ok('read_at' in m, 'read_at is in the V2 message')
  assert.ok('delivered_at' in m, 'delivered_at is in the V2 message')
  assert.equal(m.read_at, null)
  const [inHistory] = await history(bob, m.chat_id)
  assert.equal(inHistory.read_at, null)
  assert.ok('delivered_at' in inHistory)
})

test('delete for me hides the message from my history only; the peer keeps it; repeating is fine', async () => {
  const [alice, bob] = await users(2)
  const m1 = await send(alice, bob, 'one')
  const m2 = await send(alice, bob, 'two')
  const bobSeq = await seqOf(bob)

  const res = await del(alice, m2.message_id)
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body, { success: true, data: { message_id: m2.message_id, deleted_for_all: false } })
  assert.deepEqual(await contents(alice, m1.chat_id), ['one'])
  assert.deepEqual(await contents(bob, m1.chat_id), ['two', 'one'])

  // the event goes to my devices only
  const mine = await updatesOf(alice, 'message.deleted')
  assert.deepEqual(
    mine.map((u) => u.data),
    [{ chat_id: m1.chat_id, message_id: m2.message_id, deleted_for_all: false }],
  )
  assert.equal(await seqOf(bob), bobSeq, 'the peer gets no update')

  const again = await del(alice, m2.message_id)
  assert.equal(again.status, 200, again.text)
  assert.deepEqual(again.body.data, { message_id: m2.message_id, deleted_for_all: false })
  assert.deepEqual(await contents(bob, m1.chat_id), ['two', 'one'])

  // the receiver may delete for himself a message he did not write
  const byReceiver = await del(bob, m1.message_id)
  assert.equal(byReceiver.status, 200, byReceiver.text)
  assert.deepEqual(byReceiver.body.data, { message_id: m1.message_id, deleted_for_all: false })
  assert.deepEqual(await contents(bob, m1.chat_id), ['two'])
  assert.deepEqual(await contents(alice, m1.chat_id), ['one'])
})

test('delete for all by the sender removes it for both, tells both, and moves last_message back', async () => {
  const [alice, bob] = await users(2)
  const m1 = await send(alice, bob, 'first')
  const m2 = await send(bob, alice, 'second')
  const m3 = await send(alice, bob, 'third')
  const chatId = m1.chat_id

  const res = await del(alice, m3.message_id, { for_all: 'true' })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body, { success: true, data: { message_id: m3.message_id, deleted_for_all: true } })
  assert.deepEqual(await contents(alice, chatId), ['second', 'first'])
  assert.deepEqual(await contents(bob, chatId), ['second', 'first'])
  for (const user of [alice, bob]) {
    const events = await updatesOf(user, 'message.deleted')
    assert.deepEqual(
      events.map((u) => u.data),
      [{ chat_id: chatId, message_id: m3.message_id, deleted_for_all: true }],
    )
    const item = await chatItem(user, chatId)
    assert.equal(item.last_message.message_id, m2.message_id)
    assert.equal(item.last_message.content, 'second')
  }

  // the JSON body form is accepted too
  const viaBody = await bob.api.request('DELETE', `${V2}/messages/${m2.message_id}`, { for_all: true })
  assert.equal(viaBody.status, 200, viaBody.text)
  assert.deepEqual(viaBody.body.data, { message_id: m2.message_id, deleted_for_all: true })
  await del(alice, m1.message_id, { for_all: 'true' })
  for (const user of [alice, bob]) {
    assert.deepEqual(await contents(user, chatId), [])
    const item = await chatItem(user, chatId)
    assert.ok(item, 'the chat stays in the list')
    assert.equal(item.last_message, null)
  }
})

// Not spelled out by the contract, but what a messenger does: what nobody can see is not unread.
test('a message deleted for all no longer counts as unread (last or not)', async () => {
  const [alice, bob] = await users(2)
  const m1 = await send(alice, bob, 'u1')
  const m2 = await send(alice, bob, 'u2')
  const m3 = await send(alice, bob, 'u3')
  assert.equal((await chatItem(bob, m1.chat_id)).unread_count, 3)
  await del(alice, m2.message_id, { for_all: 'true' })
  assert.equal((await chatItem(bob, m1.chat_id)).unread_count, 2, 'a middle message')
  await del(alice, m3.message_id, { for_all: 'true' })
  assert.equal((await chatItem(bob, m1.chat_id)).unread_count, 1, 'the last message')
  await del(alice, m1.message_id, { for_all: 'true' })
  assert.equal((await chatItem(bob, m1.chat_id)).unread_count, 0, 'the only one left')
})

test('delete refusals: for_all by the non-sender is 403, outsiders and unknown ids 404, twice 404; nothing changes', async () => {
  const [alice, bob, eve] = await users(3)
  const m = await send(alice, bob, 'keep me')
  const seqs = [await seqOf(alice), await seqOf(bob), await seqOf(eve)]

  assertError(await del(bob, m.message_id, { for_all: 'true' }), 403, 'forbidden', 'non-sender for_all')
  assertError(await del(eve, m.message_id, { for_all: 'true' }), 404, 'not_found', 'outsider for_all')
  assertError(await del(eve, m.message_id), 404, 'not_found', 'outsider for me')
  assertError(await del(alice, 987_654_321), 404, 'not_found', 'unknown id')
  assert.equal((await server.api.delete(`${V2}/messages/${m.message_id}`)).status, 401)
  assert.deepEqual(await contents(alice, m.chat_id), ['keep me'])
  assert.deepEqual(await contents(bob, m.chat_id), ['keep me'])
  assert.deepEqual([await seqOf(alice), await seqOf(bob), await seqOf(eve)], seqs, 'no update written on refusals')

  assert.equal((await del(alice, m.message_id, { for_all: 'true' })).status, 200)
  assertError(await del(alice, m.message_id, { for_all: 'true' }), 404, 'not_found', 'already deleted for all')
  assertError(await del(bob, m.message_id), 404, 'not_found', 'deleted for all, then for me')
})

// ---------------------------------------------------------------- 2. edit

test("the sender edits: new content, edited_at set, in history and in both members' updates", async () => {
  const [alice, bob] = await users(2)
  const m = await send(alice, bob, 'typo')
  assert.equal(m.edited_at, null)
  const res = await alice.api.post(`${V2}/messages/${m.message_id}/edit`, { content: 'fixed' })
  assert.equal(res.status, 200, res.text)
  const edited = res.body.data
  assert.equal(edited.message_id, m.message_id)
  assert.equal(edited.chat_id, m.chat_id)
  assert.equal(edited.sender_id, alice.id)
  assert.equal(edited.content, 'fixed')
  assert.match(edited.edited_at, ISO)
  assert.equal(edited.timestamp, m.timestamp, 'the send time does not move')
  assert.ok(Date.parse(edited.edited_at) >= Date.parse(m.timestamp))

  for (const user of [alice, bob]) {
    const [inHistory] = await history(user, m.chat_id)
    assert.equal(inHistory.content, 'fixed')
    assert.equal(inHistory.edited_at, edited.edited_at)
    const events = await updatesOf(user, 'message.edited')
    assert.equal(events.length, 1)
    assert.equal(events[0].data.message.message_id, m.message_id)
    assert.equal(events[0].data.message.content, 'fixed')
    assert.equal(events[0].data.message.edited_at, edited.edited_at)
    assert.equal(events[0].data.message.chat_id, m.chat_id)
  }
  assert.equal((await chatItem(bob, m.chat_id)).last_message.content, 'fixed')

  const longest = await alice.api.post(`${V2}/messages/${m.message_id}/edit`, { content: 'y'.repeat(4096) })
  assert.equal(longest.status, 200, 'exactly 4096 characters is allowed')
})

test('edit refusals: non-sender 403, outsider 404, bad content 400, deleted 404; content unchanged, no events', async () => {
  const [alice, bob, eve] = await users(3)
  const m = await send(alice, bob, 'original')
  const edit = (user: TestUser, body: unknown, id = m.message_id) => user.api.post(`${V2}/messages/${id}/edit`, body)
  const seqs = [await seqOf(alice), await seqOf(bob), await seqOf(eve)]

  assertError(await edit(bob, { content: 'hijack' }), 403, 'forbidden', 'non-sender')
  assertError(await edit(eve, { content: 'hijack' }), 404, 'not_found', 'outsider')
  assertError(await edit(alice, { content: 'x' }, 987_654_321), 404, 'not_found', 'unknown')
  for (const body of [{ content: '' }, { content: '  \n\t ' }, { content: 'z'.repeat(4097) }, {}, { content: 7 }]) {
    assertError(await edit(alice, body), 400, 'validation_error', JSON.stringify(body).slice(0, 40))
  }
  assert.equal((await server.api.post(`${V2}/messages/${m.message_id}/edit`, { content: 'anon' })).status, 401)
  const [inHistory] = await history(bob, m.chat_id)
  assert.equal(inHistory.content, 'original')
  assert.equal(inHistory.edited_at, null)
  assert.deepEqual([await seqOf(alice), await seqOf(bob), await seqOf(eve)], seqs)

  await del(alice, m.message_id, { for_all: 'true' })
  assertError(await edit(alice, { content: 'resurrect' }), 404, 'not_found', 'deleted for all')
})

// ---------------------------------------------------------------- 3. read

test('reading message N reads everything up to N: unread count, is_read/read_at, one message.read to both', async () => {
  const [alice, bob] = await users(2)
  const sent = []
  for (let i = 1; i <= 5; i++) sent.push(await send(alice, bob, `m${i}`))
  const chatId = sent[0].chat_id
  assert.equal((await chatItem(bob, chatId)).unread_count, 5)

  const res = await bob.api.post(`${V2}/messages/${sent[2].message_id}/read`)
  assert.equal(res.status, 200, res.text)
  const { read_at: readAt, ...rest } = res.body.data
  assert.deepEqual(rest, { chat_id: chatId, message_id: sent[2].message_id, unread_count: 2 })
  assert.match(readAt, ISO)
  assert.equal((await chatItem(bob, chatId)).unread_count, 2)

  const seen = (await history(alice, chatId)).reverse()
  assert.deepEqual(
    seen.map((m) => m.is_read),
    [true, true, true, false, false],
  )
  assert.deepEqual(
    seen.map((m) => m.read_at),
    [readAt, readAt, readAt, null, null],
  )
  assert.equal((await chatItem(alice, chatId)).last_message.is_read, false)

  for (const user of [alice, bob]) {
    const events = await updatesOf(user, 'message.read')
    assert.deepEqual(
      events.map((u) => u.data),
      [{ chat_id: chatId, reader_id: bob.id, message_id: sent[2].message_id, read_at: readAt }],
    )
  }

  // an older message after a newer one: 200, nothing moves, no event
  const seqs = [await seqOf(alice), await seqOf(bob)]
  const older = await bob.api.post(`${V2}/messages/${sent[0].message_id}/read`)
  assert.equal(older.status, 200, older.text)
  assert.equal(older.body.data.unread_count, 2)
  assert.equal(older.body.data.chat_id, chatId)
  assert.equal((await chatItem(bob, chatId)).unread_count, 2)
  assert.deepEqual([await seqOf(alice), await seqOf(bob)], seqs)
  assert.deepEqual(
    (await history(alice, chatId)).reverse().map((m) => m.is_read),
    [true, true, true, false, false],
  )

  const all = await bob.api.post(`${V2}/messages/${sent[4].message_id}/read`)
  assert.equal(all.body.data.unread_count, 0)
  assert.equal((await chatItem(bob, chatId)).unread_count, 0)
  assert.equal((await chatItem(alice, chatId)).last_message.is_read, true)
  assert.ok((await history(alice, chatId)).every((m) => m.is_read === true && m.read_at !== null))
})

test('read refusals: outsiders and unknown ids are 404 and change nothing', async () => {
  const [alice, bob, eve] = await users(3)
  const m = await send(alice, bob, 'unread')
  const seqs = [await seqOf(alice), await seqOf(bob)]
  assertError(await eve.api.post(`${V2}/messages/${m.message_id}/read`), 404, 'not_found', 'outsider')
  assertError(await bob.api.post(`${V2}/messages/987654321/read`), 404, 'not_found', 'unknown')
  assert.equal((await server.api.post(`${V2}/messages/${m.message_id}/read`)).status, 401)
  assert.equal((await chatItem(bob, m.chat_id)).unread_count, 1)
  assert.equal((await history(alice, m.chat_id))[0].is_read, false)
  assert.deepEqual([await seqOf(alice), await seqOf(bob)], seqs, JSON.stringify((await updates(bob)).items.slice(-2)))
  assert.deepEqual((await updates(eve)).items, [])
})

// ---------------------------------------------------------------- 4. reactions

test('reactions: one per user, a second replaces the first, null removes, counts aggregate in history', async () => {
  const [alice, bob] = await users(2)
  const m = await send(alice, bob, 'react to me')
  const react = (user: TestUser, emoji: string | null) => user.api.post(`${V2}/messages/${m.message_id}/reaction`, { emoji })
  const expect = async (user: TestUser, emoji: string | null, reactions: Record<string, number>) => {
    const res = await react(user, emoji)
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body.data, reactions, "the answer is the message's reactions map (docs/api.md)")
  }
  await expect(alice, '👍', { '👍': 1 })
  await expect(bob, '👍', { '👍': 2 })
  for (const user of [alice, bob]) assert.deepEqual((await history(user, m.chat_id))[0].reactions, { '👍': 2 })
  await expect(bob, '❤️', { '👍': 1, '❤️': 1 })
  await expect(bob, null, { '👍': 1 })
  await expect(alice, '👨‍👩‍👧', { '👨‍👩‍👧': 1 })
  for (const user of [alice, bob]) {
    assert.deepEqual((await history(user, m.chat_id))[0].reactions, { '👨‍👩‍👧': 1 })
    const events = await updatesOf(user, 'reaction.updated')
    assert.deepEqual(
      events.map((u) => u.data),
      [
        { chat_id: m.chat_id, message_id: m.message_id, reactions: { '👍': 1 } },
        { chat_id: m.chat_id, message_id: m.message_id, reactions: { '👍': 2 } },
        { chat_id: m.chat_id, message_id: m.message_id, reactions: { '👍': 1, '❤️': 1 } },
        { chat_id: m.chat_id, message_id: m.message_id, reactions: { '👍': 1 } },
        { chat_id: m.chat_id, message_id: m.message_id, reactions: { '👨‍👩‍👧': 1 } },
      ],
    )
  }
  // removing when I have none is harmless
  await expect(bob, null, { '👨‍👩‍👧': 1 })
})

test('reaction refusals: outsider 404, missing or over-long emoji 400; nothing changes', async () => {
  const [alice, bob, eve] = await users(3)
  const m = await send(alice, bob, 'no touching')
  const react = (user: TestUser, body: unknown, id = m.message_id) => user.api.post(`${V2}/messages/${id}/reaction`, body)
  const seqs = [await seqOf(alice), await seqOf(bob)]
  assertError(await react(eve, { emoji: '👍' }), 404, 'not_found', 'outsider')
  assertError(await react(alice, { emoji: '👍' }, 987_654_321), 404, 'not_found', 'unknown')
  assertError(await react(alice, {}), 400, 'validation_error', 'missing emoji')
  assertError(await react(alice, { emoji: 'a'.repeat(33) }), 400, 'validation_error', '33 chars')
  assertError(await react(alice, { emoji: 5 }), 400, 'validation_error', 'number')
  assert.equal((await server.api.post(`${V2}/messages/${m.message_id}/reaction`, { emoji: '👍' })).status, 401)
  assert.deepEqual((await history(bob, m.chat_id))[0].reactions, {})
  assert.deepEqual([await seqOf(alice), await seqOf(bob)], seqs)
})

// ---------------------------------------------------------------- 6. forward

test("forward copies into the target chat with the original sender's name, kept through forwards of forwards", async () => {
  const [alice, bob, carol, dave] = await users(4, [{ display_name: 'Alice Liddell' }])
  const original = await send(alice, bob, 'pass it on')
  const bobCarol = await createChat(bob, carol)
  const carolSeq = await seqOf(carol)

  const res = await bob.api.post(`${V2}/messages/forward`, { message_id: original.message_id, target_chat_id: bobCarol })
  assert.equal(res.status, 200, res.text)
  const fwd = res.body.data
  assert.notEqual(fwd.message_id, original.message_id)
  assert.equal(fwd.chat_id, bobCarol)
  assert.equal(fwd.sender_id, bob.id)
  assert.equal(fwd.receiver_id, carol.id)
  assert.equal(fwd.content, 'pass it on')
  assert.equal(fwd.forwarded_from, 'Alice Liddell')
  const [inCarols] = await history(carol, bobCarol)
  assert.equal(inCarols.message_id, fwd.message_id)
  assert.equal(inCarols.forwarded_from, 'Alice Liddell')
  const carolNew = (await updates(carol)).items.filter((u) => u.seq > carolSeq)
  assert.deepEqual(
    carolNew.map((u) => [u.type, u.data.message?.message_id]),
    [['message.new', fwd.message_id]],
  )
  assert.deepEqual(await contents(alice, original.chat_id), ['pass it on'], 'the source chat is untouched')

  // a forward of a forward, through the alias, keeps the original author
  const carolDave = await createChat(carol, dave)
  const again = await carol.api.post(`${V2}/forward`, { message_id: fwd.message_id, target_chat_id: carolDave })
  assert.equal(again.status, 200, again.text)
  assert.equal(again.body.data.forwarded_from, 'Alice Liddell')
  assert.equal(again.body.data.sender_id, carol.id)
  assert.equal((await history(dave, carolDave))[0].forwarded_from, 'Alice Liddell')

  // without a display name at registration, the username
  const plain = await send(dave, carol, 'from dave')
  const third = await carol.api.post(`${V2}/forward`, { message_id: plain.message_id, target_chat_id: bobCarol })
  assert.equal(third.status, 200, third.text)
  assert.equal(third.body.data.forwarded_from, dave.username)
  assert.equal(plain.forwarded_from, null)
})

test('forward refusals: source outsider 404, target not mine 404, deleted source 404, blocked target 403', async () => {
  const [alice, bob, carol, eve] = await users(4)
  const m = await send(alice, bob, 'secret')
  const aliceCarol = await createChat(alice, carol)
  const eveCarol = await createChat(eve, carol)
  const bobCarol = await createChat(bob, carol)
  const fwd = (user: TestUser, body: unknown, path = 'messages/forward') => user.api.post(`${V2}/${path}`, body)
  const counts = async () => [
    (await history(carol, aliceCarol)).length,
    (await history(carol, eveCarol)).length,
    (await history(carol, bobCarol)).length,
  ]
  const before = await counts()

  assertError(await fwd(eve, { message_id: m.message_id, target_chat_id: eveCarol }), 404, 'not_found', 'source outsider')
  assertError(await fwd(eve, { message_id: m.message_id, target_chat_id: eveCarol }, 'forward'), 404, 'not_found', 'alias, source outsider')
  assertError(await fwd(bob, { message_id: m.message_id, target_chat_id: aliceCarol }), 404, 'not_found', 'target not mine')
  assertError(await fwd(bob, { message_id: 987_654_321, target_chat_id: bobCarol }), 404, 'not_found', 'unknown source')
  assertError(await fwd(bob, { message_id: m.message_id }), 400, 'validation_error', 'no target')

  await carol.api.post(`${V2}/block`, { user_id: bob.id })
  assertError(await fwd(bob, { message_id: m.message_id, target_chat_id: bobCarol }), 403, 'blocked', 'blocked by target peer')
  await carol.api.post(`${V2}/unblock`, { user_id: bob.id })

  await del(alice, m.message_id, { for_all: 'true' })
  assertError(await fwd(bob, { message_id: m.message_id, target_chat_id: bobCarol }), 404, 'not_found', 'deleted source')
  assert.deepEqual(await counts(), before, 'nothing written')
})

// ---------------------------------------------------------------- 12. rich shape

test('history format=rich: id, timestamp_formatted, is_own, reply and forward fields; v2 and default stay V2', async () => {
  const [alice, bob, carol] = await users(3, [{ display_name: 'Alice Rich' }])
  const long = 'L'.repeat(30) + 'é'.repeat(10) + 'x'.repeat(30)
  const m1 = await send(alice, bob, long)
  const m2 = await send(bob, alice, 'short answer', { reply_to_id: m1.message_id })
  const fromCarol = await send(carol, alice, 'carol says hi')
  const m3 = (await alice.api.post(`${V2}/messages/forward`, { message_id: fromCarol.message_id, target_chat_id: m1.chat_id })).body.data
  const m4 = await send(alice, bob, 'reply to the reply', { reply_to_id: m2.message_id })

  const res = await bob.api.get(`${V2}/chat/history`, { query: { chat_id: m1.chat_id, format: 'rich' } })
  assert.equal(res.status, 200, res.text)
  const items = res.body.items
  assert.deepEqual(
    items.map((m: any) => m.id),
    [m4.message_id, m3.message_id, m2.message_id, m1.message_id],
  )
  for (const m of items) {
    assert.equal('message_id' in m, false, 'rich items use id instead of message_id')
    assert.match(m.timestamp_formatted, /^\d{2}:\d{2}$/)
    assert.equal(m.timestamp_formatted, m.timestamp.slice(11, 16), 'HH:MM in UTC')
  }
  const [r4, r3, r2, r1] = items
  assert.deepEqual([r4.is_own, r3.is_own, r2.is_own, r1.is_own], [false, false, true, false])
  assert.equal(r1.content, long)
  assert.equal(r1.reply_to_content, null)
  assert.equal(r1.reply_to_sender, null)
  assert.equal(r1.forwarded_from, null)
  assert.equal(r2.reply_to_content, long.slice(0, 50))
  assert.equal(r2.reply_to_sender, 'Alice Rich')
  assert.equal(r3.forwarded_from, carol.username)
  assert.equal(r3.reply_to_content, null)
  assert.equal(r4.reply_to_content, 'short answer')
  assert.equal(r4.reply_to_sender, bob.username)

  const own = await alice.api.get(`${V2}/chat/history`, { query: { chat_id: m1.chat_id, format: 'rich' } })
  assert.deepEqual(
    own.body.items.map((m: any) => m.is_own),
    [true, true, false, true],
  )

  const v2 = await bob.api.get(`${V2}/chat/history`, { query: { chat_id: m1.chat_id, format: 'v2' } })
  const plain = await bob.api.get(`${V2}/chat/history`, { query: { chat_id: m1.chat_id } })
  assert.equal(v2.status, 200)
  assert.deepEqual(
    v2.body.items.map((m: any) => m.message_id),
    [m4.message_id, m3.message_id, m2.message_id, m1.message_id],
  )
  assert.equal('id' in v2.body.items[0], false)
  assert.equal('is_own' in v2.body.items[0], false)
  assert.deepEqual(v2.body, plain.body)

  assertError(
    await bob.api.get(`${V2}/chat/history`, { query: { chat_id: m1.chat_id, format: 'xml' } }),
    400,
    'validation_error',
    'bad format',
  )
  const carolRich = await carol.api.get(`${V2}/chat/history`, { query: { chat_id: m1.chat_id, format: 'rich' } })
  assertError(carolRich, 404, 'not_found', 'outsider, rich')
})

// ---------------------------------------------------------------- 13. authorization

test('an outsider gets 404 and no data for every action on a chat, and never sees its events', async () => {
  const [alice, bob, eve] = await users(3)
  const eveSocket = await TestSocket.connect(server.url, eve.token)
  const m = await send(alice, bob, 'members only')
  const chatId = m.chat_id
  const eveChat = await createChat(eve, alice)

  const refusals: [string, Promise<any>][] = [
    ['history', eve.api.get(`${V2}/chat/history`, { query: { chat_id: chatId } })],
    ['history rich', eve.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, format: 'rich' } })],
    ['edit', eve.api.post(`${V2}/messages/${m.message_id}/edit`, { content: 'x' })],
    ['delete', del(eve, m.message_id)],
    ['delete for all', del(eve, m.message_id, { for_all: 'true' })],
    ['read', eve.api.post(`${V2}/messages/${m.message_id}/read`)],
    ['reaction', eve.api.post(`${V2}/messages/${m.message_id}/reaction`, { emoji: '👍' })],
    ['forward', eve.api.post(`${V2}/messages/forward`, { message_id: m.message_id, target_chat_id: eveChat })],
    ['forward alias', eve.api.post(`${V2}/forward`, { message_id: m.message_id, target_chat_id: eveChat })],
    ['saved/add', eve.api.post(`${V2}/saved/add`, { message_id: m.message_id })],
    ['typing', eve.api.post(`${V2}/chat/typing`, { chat_id: chatId, is_typing: true })],
    ['send', eve.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'intrude' })],
  ]
  for (const [what, pending] of refusals) {
    const res = await pending
    assert.ok(res.status === 404 || res.status === 403, `${what}: ${res.status} ${res.text}`)
    assert.equal(res.body.success, false, what)
    assert.equal(res.body.data, undefined, what)
    assert.equal(res.body.items, undefined, what)
    assert.equal(res.text.includes('members only'), false, `${what} leaks content`)
  }

  // everything the members do in the chat stays among them
  await alice.api.post(`${V2}/messages/${m.message_id}/edit`, { content: 'members only, edited' })
  await bob.api.post(`${V2}/messages/${m.message_id}/read`)
  await bob.api.post(`${V2}/messages/${m.message_id}/reaction`, { emoji: '🔥' })
  await bob.api.post(`${V2}/chat/typing`, { chat_id: chatId, is_typing: true })
  const m2 = await send(bob, alice, 'second')
  await del(bob, m2.message_id, { for_all: 'true' })
  await del(alice, m.message_id)
  await new Promise((resolve) => setTimeout(resolve, 400))
  // eve's own chat with alice may bring her a chat.updated; nothing else may arrive
  const leaked = eveSocket.frames.filter((f) => f.type !== 'presence' && !(f.type === 'chat.updated' && f.data?.chat_id === eveChat))
  assert.deepEqual(leaked, [], "no event of the chat reaches the outsider's socket")
  assert.ok(
    eveSocket.frames.every((f) => f.type !== 'presence' || f.data.user_id === alice.id),
    'presence only about users eve shares a chat with',
  )
  // eve's own chat with alice was created; nothing of the alice–bob chat is in her log
  const eveLog = await updates(eve)
  assert.ok(eveLog.items.every((u) => u.data?.chat_id !== chatId && u.data?.message?.chat_id !== chatId))
  assert.deepEqual(await contents(alice, chatId), [])
  assert.deepEqual(await contents(bob, chatId), ['members only, edited'])
})
