/**
 * Blocking beyond send and typing: when alice blocks bob, bob's edits,
 * deletes for everyone and reactions in their personal chat answer 403 `blocked`; his
 * delete-for-me still works for him but reaches nobody; his reads are the chat's state, which
 * alice sees; presence is hidden both ways; a message he scheduled before the block is dropped.
 * Every silence check has a live counterpart (unblock, or a third user who is not blocked)
 * showing the same frame would have arrived.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { anotherDevice, history, ISO, registerUsers, send, updates, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { assertDelivered, assertNone, TestSocket } from '../harness/socket.js'
import { waitFor } from '../harness/wait.js'

const server = await startTestServer()
const connect = (user: TestUser) => TestSocket.connect(server.url, user.token)
/** another session (device) of the same user */
const device = (user: TestUser) => anotherDevice(server, user)
const users = (n: number) => registerUsers(server, n)
const block = (me: TestUser, userId: number) => me.api.post(`${V2}/block`, { user_id: userId })
const unblock = (me: TestUser, userId: number) => me.api.post(`${V2}/unblock`, { user_id: userId })
const edit = (user: TestUser, id: number, content: string) => user.api.post(`${V2}/messages/${id}/edit`, { content })
const react = (user: TestUser, id: number, emoji: string | null) => user.api.post(`${V2}/messages/${id}/reaction`, { emoji })
const del = (user: TestUser, id: number, forAll: boolean) =>
  user.api.delete(`${V2}/messages/${id}`, forAll ? { query: { for_all: 'true' } } : {})
const read = (user: TestUser, id: number) => user.api.post(`${V2}/messages/${id}/read`)
/**
 * The user's update log as [type, seq] entries and its seq: "nothing new was logged". (A logged
 * message.new is rendered from the message as it is now, so its data is compared elsewhere.)
 */
const logOf = async (user: TestUser) => {
  const log = await updates(user)
  return { seq: log.seq, items: log.items.map((u) => [u.type, u.seq]) }
}
const byId = async (user: TestUser, chatId: number, id: number) => (await history(user, chatId)).find((m) => m.message_id === id)
async function chatListItem(user: TestUser, chatId: number) {
  const res = await user.api.get(`${V2}/chat_list`, { query: { per_page: 100 } })
  assert.equal(res.status, 200, res.text)
  return res.body.items.find((i: any) => i.chat_id === chatId)
}

/** After the drains: nothing at all is left on these sockets (presence is checked on its own). */
function assertNothingElse(sockets: TestSocket[], what: string) {
  for (const socket of sockets) {
    assert.deepEqual(
      socket.frames.filter((f) => f.type !== 'presence'),
      [],
      `${what}: no frame of any type`,
    )
  }
}

/**
 * alice and bob have a personal chat (a1, b1, b2, a2, oldest first); then alice blocks bob, and only
 * then do alice's two devices and bob's socket connect (so the block's own chat.updated is not in
 * the way of the silence checks).
 */
async function blockedChat() {
  const [alice, bob] = await users(2)
  const a1 = await send(alice, bob, 'alice 1')
  const b1 = await send(bob, alice, 'bob 1')
  const b2 = await send(bob, alice, 'bob 2')
  // alice's a2 comes last, so it is unread for bob (his own sends moved his read position to b2)
  const a2 = await send(alice, bob, 'alice 2')
  const chatId = a1.chat_id as number
  const blocking = await block(alice, bob.id)
  assert.equal(blocking.status, 200, blocking.text)
  const [laptop, phone, bobSocket] = [await connect(alice), await device(alice), await connect(bob)]
  const aliceLog = await logOf(alice)
  return { alice, bob, chatId, a1, b1, a2, b2, aliceSockets: [laptop, phone], bobSocket, aliceLog }
}

// ---------------------------------------------------------------- edit

test('blocked: bob editing his own message is 403 blocked; alice sees it unchanged and gets no message.edited', async () => {
  const { alice, bob, chatId, a1, b1, aliceSockets, bobSocket, aliceLog } = await blockedChat()
  const before = await history(alice, chatId)

  assertError(await edit(bob, b1.message_id, 'bob 1, rewritten'), 403, 'blocked', 'edit')

  for (const socket of aliceSockets) await assertNone(socket, 'message.edited', 300)
  await assertNone(bobSocket, 'message.edited', 0, 'message.edited to the refused editor')
  assertNothingElse([...aliceSockets, bobSocket], 'after a refused edit')
  const mine = await byId(alice, chatId, b1.message_id)
  assert.equal(mine.content, 'bob 1')
  assert.equal(mine.edited_at, null)
  assert.deepEqual(await history(alice, chatId), before)
  assert.equal((await byId(bob, chatId, b1.message_id)).content, 'bob 1', 'nothing written for bob either')
  assert.deepEqual(await logOf(alice), aliceLog, "alice's update log is unchanged")
  // control: an edit alice may make reaches all three sockets
  await assertDelivered([...aliceSockets, bobSocket], 'message.edited', () => edit(alice, a1.message_id, 'alice 1, edited'))
})

// ---------------------------------------------------------------- delete

test('blocked: bob deleting for everyone is 403 blocked; alice still sees the message and gets no message.deleted', async () => {
  const { alice, bob, chatId, a2, b2, aliceSockets, bobSocket, aliceLog } = await blockedChat()
  const before = await history(alice, chatId)

  assertError(await del(bob, b2.message_id, true), 403, 'blocked', 'delete for all (query)')
  assertError(
    await bob.api.request('DELETE', `${V2}/messages/${b2.message_id}`, { for_all: true }),
    403,
    'blocked',
    'delete for all (JSON body)',
  )

  for (const socket of aliceSockets) {
    await assertNone(socket, 'message.deleted', 300)
    await assertNone(socket, 'chat.updated', 0)
  }
  await assertNone(bobSocket, 'message.deleted', 0, 'message.deleted to the refused deleter')
  assertNothingElse([...aliceSockets, bobSocket], 'after a refused delete')
  assert.deepEqual(await history(alice, chatId), before)
  assert.equal((await byId(bob, chatId, b2.message_id)).content, 'bob 2', 'still there for bob too')
  assert.equal((await chatListItem(alice, chatId)).last_message.message_id, before[0].message_id)
  assert.deepEqual(await logOf(alice), aliceLog, "alice's update log is unchanged")
  // control: alice deleting her last message for everyone reaches all three (and moves the last message)
  await assertDelivered([...aliceSockets, bobSocket], 'message.deleted', () => del(alice, a2.message_id, true))
  for (const socket of aliceSockets) assert.equal((await socket.next('chat.updated')).data.chat_id, chatId)
})

test('blocked: bob deleting for himself works for bob only; nothing reaches alice', async () => {
  const { alice, bob, chatId, a1, b1, a2, b2, aliceSockets, bobSocket, aliceLog } = await blockedChat()
  const before = await history(alice, chatId)

  const mine = await del(bob, b1.message_id, false)
  assert.equal(mine.status, 200, mine.text)
  assert.deepEqual(mine.body, { success: true, data: { message_id: b1.message_id, deleted_for_all: false } })
  const theirs = await del(bob, a1.message_id, false)
  assert.equal(theirs.status, 200, theirs.text)
  assert.deepEqual(theirs.body.data, { message_id: a1.message_id, deleted_for_all: false })

  const frames = [await bobSocket.next('message.deleted'), await bobSocket.next('message.deleted')]
  assert.deepEqual(
    frames.map((f) => f.data),
    [
      { chat_id: chatId, message_id: b1.message_id, deleted_for_all: false },
      { chat_id: chatId, message_id: a1.message_id, deleted_for_all: false },
    ],
  )
  assert.deepEqual(
    (await history(bob, chatId)).map((m) => m.message_id),
    [a2.message_id, b2.message_id],
  )

  for (const socket of aliceSockets) await assertNone(socket, 'message.deleted', 300)
  assertNothingElse(aliceSockets, 'after bob deleted for himself')
  assert.deepEqual(await history(alice, chatId), before, 'alice still sees all four')
  assert.deepEqual(await logOf(alice), aliceLog, "alice's update log is unchanged")
  // control: alice deleting for herself reaches her devices
  await assertDelivered(aliceSockets, 'message.deleted', () => del(alice, b2.message_id, false))
})

// ---------------------------------------------------------------- react

test('blocked: bob reacting (set, change or remove) is 403 blocked; reactions unchanged, no reaction.updated', async () => {
  const [alice, bob] = await users(2)
  const a1 = await send(alice, bob, 'react to me')
  const a2 = await send(alice, bob, 'me too')
  const chatId = a1.chat_id as number
  // before the block bob has reacted to a2, and alice herself to a1
  assert.equal((await react(bob, a2.message_id, '👍')).status, 200)
  assert.equal((await react(alice, a1.message_id, '❤️')).status, 200)
  assert.equal((await block(alice, bob.id)).status, 200)
  const [laptop, phone] = [await connect(alice), await device(alice)]
  const aliceLog = await logOf(alice)

  assertError(await react(bob, a1.message_id, '🎉'), 403, 'blocked', 'new reaction')
  assertError(await react(bob, a2.message_id, '🎉'), 403, 'blocked', 'changed reaction')
  assertError(await react(bob, a2.message_id, null), 403, 'blocked', 'removed reaction')

  for (const socket of [laptop, phone]) await assertNone(socket, 'reaction.updated', 300)
  assertNothingElse([laptop, phone], 'after refused reactions')
  const [m2, m1] = await history(alice, chatId)
  assert.deepEqual([m1.message_id, m2.message_id], [a1.message_id, a2.message_id])
  assert.deepEqual(m1.reactions, { '❤️': 1 })
  assert.deepEqual(m2.reactions, { '👍': 1 })
  assert.deepEqual(
    (await history(bob, chatId)).map((m) => m.reactions),
    [{ '👍': 1 }, { '❤️': 1 }],
  )
  assert.deepEqual(await logOf(alice), aliceLog, "alice's update log is unchanged")
  // control: alice's own reaction reaches her devices
  await assertDelivered([laptop, phone], 'reaction.updated', () => react(alice, a2.message_id, '🎉'))
})

// ---------------------------------------------------------------- read

test("blocked: bob's read works for him and is the chat's state: both members' devices get message.read", async () => {
  const { alice, bob, chatId, a2, aliceSockets, bobSocket, aliceLog } = await blockedChat()
  assert.equal((await chatListItem(bob, chatId)).unread_count, 1, 'a2 is unread for bob')

  const res = await read(bob, a2.message_id)
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.data.chat_id, chatId)
  assert.equal(res.body.data.message_id, a2.message_id)
  assert.equal(res.body.data.unread_count, 0)
  assert.match(res.body.data.read_at, ISO)
  const event = { chat_id: chatId, reader_id: bob.id, message_id: a2.message_id, read_at: res.body.data.read_at }
  assert.deepEqual((await bobSocket.next('message.read')).data, event)
  assert.equal((await chatListItem(bob, chatId)).unread_count, 0)

  // read receipts stay the chat's state, so what alice sees live is what she sees on reload
  for (const socket of aliceSockets) assert.deepEqual((await socket.next('message.read')).data, event)
  assertNothingElse(aliceSockets, 'after bob read')
  const log = await logOf(alice)
  assert.deepEqual(log.items, [...aliceLog.items, ['message.read', aliceLog.seq + 1]], 'logged once for alice')
})

test('blocked: after bob read them, alice sees her messages read in history and chat_list', async () => {
  const { alice, bob, chatId, a1, a2 } = await blockedChat()
  assert.equal((await read(bob, a2.message_id)).status, 200)
  // alice writes once more (the blocker may); it stays unread until bob reads it too
  const a3 = await send(alice, bob, 'alice 3')
  const mine = async () => (await history(alice, chatId)).filter((m) => m.sender_id === alice.id).map((m) => [m.message_id, m.is_read])
  assert.deepEqual(await mine(), [
    [a3.message_id, false],
    [a2.message_id, true],
    [a1.message_id, true],
  ])
  assert.equal((await chatListItem(alice, chatId)).last_message.is_read, false)

  const res = await read(bob, a3.message_id)
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(await mine(), [
    [a3.message_id, true],
    [a2.message_id, true],
    [a1.message_id, true],
  ])
  const a3Row = (await history(alice, chatId)).find((m) => m.message_id === a3.message_id)
  assert.equal(a3Row.read_at, res.body.data.read_at)
  const item = await chatListItem(alice, chatId)
  assert.deepEqual([item.last_message.message_id, item.last_message.is_read], [a3.message_id, true])
})

// ---------------------------------------------------------------- presence

test('blocked: presence frames are hidden both ways (a third, unblocked peer still gets them)', async () => {
  const [alice, bob, carol] = await users(3)
  await send(alice, bob, 'alice and bob')
  await send(carol, bob, 'carol and bob')
  await send(carol, alice, 'carol and alice')
  assert.equal((await block(alice, bob.id)).status, 200)
  const carolSocket = await connect(carol)
  /** carol's next presence frame, as [user_id, is_online] */
  const carolHears = async () => {
    const frame = await carolSocket.next('presence')
    return [frame.data.user_id, frame.data.is_online]
  }
  const presenceOf = async (socket: TestSocket, userId: number) =>
    (await socket.drain('presence', 300)).filter((f) => f.data.user_id === userId)

  // bob comes and goes: carol is told, alice is not
  const aliceSocket = await connect(alice)
  assert.deepEqual(await carolHears(), [alice.id, true])
  const bobSocket = await connect(bob)
  assert.deepEqual(await carolHears(), [bob.id, true])
  assert.deepEqual(await presenceOf(aliceSocket, bob.id), [], 'bob online, to alice')
  await bobSocket.close()
  assert.deepEqual(await carolHears(), [bob.id, false])
  assert.deepEqual(await presenceOf(aliceSocket, bob.id), [], 'bob offline, to alice')
  await aliceSocket.close()
  assert.deepEqual(await carolHears(), [alice.id, false])

  // alice comes and goes: carol is told, bob is not
  const bobAgain = await connect(bob)
  assert.deepEqual(await carolHears(), [bob.id, true])
  const aliceAgain = await connect(alice)
  assert.deepEqual(await carolHears(), [alice.id, true])
  assert.deepEqual(await presenceOf(bobAgain, alice.id), [], 'alice online, to bob')
  await aliceAgain.close()
  assert.deepEqual(await carolHears(), [alice.id, false])
  assert.deepEqual(await presenceOf(bobAgain, alice.id), [], 'alice offline, to bob')
  await bobAgain.close()
})

test('blocked: the Peer in chat_list hides is_online/last_seen both ways', async () => {
  const [alice, bob, carol] = await users(3)
  const m = await send(alice, bob, 'hi')
  const carolChat = (await send(carol, bob, 'hi bob')).chat_id as number
  const chatId = m.chat_id as number
  // both have been online and offline once, so each has a last_seen to hide
  for (const user of [alice, bob]) await (await connect(user)).close()
  assert.equal((await block(alice, bob.id)).status, 200)
  const aliceSocket = await connect(alice)
  const bobSocket = await connect(bob)
  // control: carol, not blocked, sees bob online
  await waitFor(async () => ((await chatListItem(carol, carolChat)).peer.is_online === true ? true : undefined), {
    message: 'carol sees bob online',
  })

  const bobSeenByAlice = (await chatListItem(alice, chatId)).peer
  const aliceSeenByBob = (await chatListItem(bob, chatId)).peer
  assert.deepEqual([bobSeenByAlice.user_id, aliceSeenByBob.user_id], [bob.id, alice.id])
  const presenceIn = (peer: any) => ({ is_online: peer.is_online, last_seen: peer.last_seen })
  assert.deepEqual(
    {
      'bob, as alice (the blocker) sees him': presenceIn(bobSeenByAlice),
      'alice, as bob (the blocked) sees her': presenceIn(aliceSeenByBob),
    },
    {
      'bob, as alice (the blocker) sees him': { is_online: false, last_seen: null },
      'alice, as bob (the blocked) sees her': { is_online: false, last_seen: null },
    },
    'presence is hidden both ways in the chat_list Peer',
  )
  await aliceSocket.close()
  await bobSocket.close()
})

test("blocked: the blocked list and a shared group's member list hide presence too (an unblocked member still sees it)", async () => {
  const [alice, bob, carol] = await users(3)
  const created = await alice.api.post(`${V2}/groups/create`, { title: 'all three', member_ids: [bob.id, carol.id] })
  assert.equal(created.status, 200, created.text)
  const groupId = created.body.data.group_id as number
  assert.equal((await block(alice, bob.id)).status, 200)
  const bobSocket = await connect(bob)
  const membersAs = async (user: TestUser) => {
    const res = await user.api.get(`${V2}/groups/members`, { query: { chat_id: groupId } })
    assert.equal(res.status, 200, res.text)
    return new Map<number, any>(res.body.items.map((m: any) => [m.user_id, m]))
  }
  // control: carol sees bob online in the same list
  await waitFor(async () => ((await membersAs(carol)).get(bob.id)?.is_online === true ? true : undefined), {
    message: 'carol sees bob online',
  })
  const presenceIn = (peer: any) => ({ is_online: peer.is_online, last_seen: peer.last_seen })
  const hidden = { is_online: false, last_seen: null }
  assert.deepEqual(presenceIn((await membersAs(alice)).get(bob.id)), hidden, 'bob in the member list, as alice sees him')
  const listed = await alice.api.get(`${V2}/blocked`)
  assert.equal(listed.status, 200, listed.text)
  assert.deepEqual(
    listed.body.items.map((p: any) => [p.user_id, presenceIn(p)]),
    [[bob.id, hidden]],
    "bob in alice's blocked list",
  )
  const aliceSocket = await connect(alice)
  await waitFor(async () => ((await membersAs(carol)).get(alice.id)?.is_online === true ? true : undefined), {
    message: 'carol sees alice online',
  })
  assert.deepEqual(presenceIn((await membersAs(bob)).get(alice.id)), hidden, 'alice in the member list, as bob sees her')
  await aliceSocket.close()
  await bobSocket.close()
})

// ---------------------------------------------------------------- unblock

test("after unblock: bob's edit, reaction, read, delete for all and presence reach alice again", async () => {
  const { alice, bob, chatId, a2, b1, b2, aliceSockets, bobSocket } = await blockedChat()
  assertError(await edit(bob, b1.message_id, 'nope'), 403, 'blocked', 'edit while blocked')
  assert.equal((await unblock(alice, bob.id)).status, 200)
  for (const socket of aliceSockets) {
    assert.deepEqual((await socket.next('chat.updated')).data, { chat_id: chatId, is_blocked: false })
  }

  const edited = await edit(bob, b1.message_id, 'bob 1, rewritten')
  assert.equal(edited.status, 200, edited.text)
  for (const socket of aliceSockets) {
    const frame = await socket.next('message.edited')
    assert.equal(frame.data.message.message_id, b1.message_id)
    assert.equal(frame.data.message.content, 'bob 1, rewritten')
    assert.equal(frame.data.message.edited_at, edited.body.data.edited_at)
  }
  assert.equal((await byId(alice, chatId, b1.message_id)).content, 'bob 1, rewritten')

  const reacted = await react(bob, a2.message_id, '🎉')
  assert.equal(reacted.status, 200, reacted.text)
  for (const socket of aliceSockets) {
    assert.deepEqual((await socket.next('reaction.updated')).data, { chat_id: chatId, message_id: a2.message_id, reactions: { '🎉': 1 } })
  }

  const readRes = await read(bob, a2.message_id)
  assert.equal(readRes.status, 200, readRes.text)
  for (const socket of aliceSockets) {
    assert.deepEqual((await socket.next('message.read')).data, {
      chat_id: chatId,
      reader_id: bob.id,
      message_id: a2.message_id,
      read_at: readRes.body.data.read_at,
    })
  }
  assert.equal((await byId(alice, chatId, a2.message_id)).is_read, true)

  const deleted = await del(bob, b2.message_id, true)
  assert.equal(deleted.status, 200, deleted.text)
  for (const socket of aliceSockets) {
    assert.deepEqual((await socket.next('message.deleted')).data, { chat_id: chatId, message_id: b2.message_id, deleted_for_all: true })
  }
  assert.equal(await byId(alice, chatId, b2.message_id), undefined)

  // presence: bob's last socket closing now tells alice
  await bobSocket.close()
  const offline = await aliceSockets[0].next('presence')
  assert.deepEqual([offline.data.user_id, offline.data.is_online], [bob.id, false])
})

// ---------------------------------------------------------------- scheduled

test('blocked: a message bob scheduled before the block is dropped (bob is told), not delivered to alice', async () => {
  const [alice, bob] = await users(2)
  const first = await send(bob, alice, 'before')
  const chatId = first.chat_id as number
  const due = new Date(Date.now() + 1500).toISOString()
  const pending = await send(bob, alice, 'scheduled, then blocked', { scheduled_at: due })
  assert.equal(pending.is_scheduled, true)
  const pendingList = async () => {
    const res = await bob.api.get(`${V2}/messages/scheduled`, { query: { chat_id: chatId } })
    assert.equal(res.status, 200, res.text)
    return res.body.items as any[]
  }
  assert.deepEqual(
    (await pendingList()).map((m) => m.scheduled_id),
    [pending.scheduled_id],
  )

  assert.equal((await block(alice, bob.id)).status, 200)
  const [laptop, phone, bobSocket] = [await connect(alice), await device(alice), await connect(bob)]
  const aliceLog = await logOf(alice)
  const bobLog = await logOf(bob)

  // the scheduler (250 ms tick) picks it up once due and drops it
  await waitFor(async () => ((await pendingList()).length === 0 ? true : undefined), {
    timeoutMs: Date.parse(due) - Date.now() + 2000,
    intervalMs: 100,
    message: "the pending message leaves bob's scheduled list",
  })
  assert.ok(Date.now() >= Date.parse(due) - 50, 'it left the list no earlier than due')
  for (const socket of [laptop, phone]) await assertNone(socket, 'message.new', 300)
  await assertNone(bobSocket, 'message.new', 0, 'message.new to bob (nothing was written)')
  // bob's devices learn it was dropped; alice hears nothing
  const dropped = await bobSocket.next('scheduled.dropped', 1000)
  assert.deepEqual(dropped.data, { chat_id: chatId, scheduled_id: pending.scheduled_id, reason: 'blocked' })
  assertNothingElse([laptop, phone, bobSocket], 'after the scheduled time')
  assert.deepEqual(
    (await history(alice, chatId)).map((m) => m.content),
    ['before'],
  )
  assert.deepEqual(
    (await history(bob, chatId)).map((m) => m.content),
    ['before'],
    "dropped: not in bob's history either",
  )
  assert.deepEqual(await logOf(alice), aliceLog, "alice's update log is unchanged")
  assert.deepEqual(
    await logOf(bob),
    { seq: dropped.seq, items: [...bobLog.items, ['scheduled.dropped', dropped.seq]] },
    "bob's update log has only the drop",
  )
  assert.equal((await chatListItem(alice, chatId)).last_message.message_id, first.message_id)
  assert.equal((await chatListItem(alice, chatId)).unread_count, 1)

  // the pending id is gone: bob cannot send it now either
  assertError(
    await bob.api.post(`${V2}/messages/${pending.scheduled_id}/scheduled`, { scheduled_at: null }),
    404,
    'not_found',
    'send now after drop',
  )
  // control: a message alice sends does reach all three sockets
  await assertDelivered([laptop, phone, bobSocket], 'message.new', () => send(alice, bob, 'from alice'))
})
