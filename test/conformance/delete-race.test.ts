/**
 * Found by the conformance run on PostgreSQL: deleting a personal chat's last message for
 * everyone while a message is being sent in that chat answered 500. The delete logged its event
 * (locking both members' update_seqs rows) and then moved the chat's last message (locking the
 * chat's row), while a send locks the chat's row first (its message seq) and the update_seqs rows
 * after: each waited for the other, and PostgreSQL aborted one as a deadlock. The delete also
 * chose the new last message before the concurrent send committed, so the chat list could show an
 * older message as the last. Now the delete takes the chat's row first, as a send does. And an
 * edit racing a delete for everyone of the same message could land after it (PostgreSQL): the
 * deleted message got its text back and a message.edited followed its message.deleted. Now such
 * an edit is 404 and changes nothing.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'

const server = await startTestServer()

test("deleting the last message for everyone while messages are sent in the chat: every request succeeds and the chat's last message is the newest one left", async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  let last = (await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'first' })).body.data
  const chatId = last.chat_id as number
  const deleted: number[] = []
  for (let round = 0; round < 25; round++) {
    // the last message goes (its sender deletes it) while both members send
    const sender = last.sender_id === alice.id ? alice : bob
    const [gone, one, two] = await Promise.all([
      sender.api.delete(`${V2}/messages/${last.message_id}`, { query: { for_all: true } }),
      bob.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `bob ${round}` }),
      alice.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `alice ${round}` }),
    ])
    for (const res of [gone, one, two]) assert.equal(res.status, 200, `round ${round}: ${res.status} ${res.text}`)
    deleted.push(last.message_id)
    last = one.body.data.message_id > two.body.data.message_id ? one.body.data : two.body.data
  }
  // positive control: the deletes did delete, the sends did land
  const history = await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 100 } })
  const ids = (history.body.items as { message_id: number }[]).map((m) => m.message_id)
  assert.equal(ids.length, 26, 'two messages a round and the first, minus the 25 deleted')
  for (const id of deleted) assert.ok(!ids.includes(id), `message ${id} was deleted`)
  assert.equal(Math.max(...ids), last.message_id)
  for (const user of [alice, bob]) {
    const list = await user.api.get(`${V2}/chat_list`)
    const item = (list.body.items as { chat_id: number; last_message: { message_id?: number; id?: number } | null }[]).find(
      (i) => i.chat_id === chatId,
    )
    assert.ok(item?.last_message, 'the chat has a last message')
    assert.equal(item.last_message.message_id ?? item.last_message.id, last.message_id, "the newest message left is the chat's last")
  }
})

test("in a group, deleting the last message for everyone while it is edited and messages are sent: no request fails, and the chat's last message is the newest one left", async () => {
  const [owner, member] = [await server.registerUser(), await server.registerUser()]
  const group = await owner.api.post(`${V2}/groups/create`, { title: 'Race', member_ids: [member.id] })
  assert.equal(group.status, 200, group.text)
  const chatId = group.body.data.group_id as number
  let last = (await owner.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'first' })).body.data
  let edited = 0
  for (let round = 0; round < 25; round++) {
    const [gone, edit, sent] = await Promise.all([
      owner.api.delete(`${V2}/messages/${last.message_id}`, { query: { for_all: true } }),
      owner.api.post(`${V2}/messages/${last.message_id}/edit`, { content: `edited ${round}` }),
      member.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `member ${round}` }),
    ])
    assert.equal(gone.status, 200, `round ${round}: delete ${gone.status} ${gone.text}`)
    assert.equal(sent.status, 200, `round ${round}: send ${sent.status} ${sent.text}`)
    // the edit lands before the delete, or finds the message gone
    assert.ok(edit.status === 200 || edit.status === 404, `round ${round}: edit ${edit.status} ${edit.text}`)
    if (edit.status === 200) edited++
    // the next round deletes the owner's newest message
    last = (await owner.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `owner ${round}` })).body.data
  }
  const list = await owner.api.get(`${V2}/chat_list`)
  const item = (list.body.items as { chat_id: number; last_message: { message_id?: number; id?: number } | null }[]).find(
    (i) => i.chat_id === chatId,
  )
  assert.equal(item?.last_message?.message_id ?? item?.last_message?.id, last.message_id)
  const history = await owner.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 100 } })
  const ids = (history.body.items as { message_id: number }[]).map((m) => m.message_id)
  assert.equal(ids.length, 26, `every member message and the owner's newest are left (${edited} edits landed first)`)
  // an edit that lost the race changed nothing: no message.edited follows a message's message.deleted
  const log = await owner.api.get(`${V2}/chat/updates`, { query: { chat_id: chatId, since: 0, limit: 1000 } })
  const gone = new Set<number>()
  let deletedEvents = 0
  for (const event of log.body.data.updates as { type: string; data: { message_id?: number; message?: { message_id: number } } }[]) {
    if (event.type === 'message.deleted') {
      gone.add(event.data.message_id!)
      deletedEvents++
    }
    if (event.type === 'message.edited')
      assert.ok(
        !gone.has(event.data.message!.message_id),
        `message ${event.data.message!.message_id} was edited after it was deleted for everyone`,
      )
  }
  assert.equal(deletedEvents, 25, 'the log was read (positive control)')
})
