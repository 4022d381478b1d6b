/**
 * Found by the conformance run on PostgreSQL (CI, 2026-12-04): a reaction in a group answered 500.
 * Three transactions waited in a circle: the reaction held the message's row and waited for the
 * chat's row (to log its event in the chat's log); a send held the chat's row (its message seq) and
 * waited for the sender's member row; a read by that member held the member row and waited for the
 * message's row, to mark it read. Now a change to a message of a group or channel (a reaction, an
 * edit, a delete for everyone) takes the chat's row before the message's, the order a send and a
 * read keep (messages/actions.ts, "Lock order").
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { V2, wholeHistory } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'

const server = await startTestServer()
const EMOJI = ['👍', '❤️', '😂', '🔥']

test('in a group, reactions, edits and deletes of a message while members send and read it: every request succeeds', async () => {
  const [owner, ann, bob, cat] = await Promise.all(Array.from({ length: 4 }, () => server.registerUser()))
  const group = await owner.api.post(`${V2}/groups/create`, { title: 'Lock order', member_ids: [ann.id, bob.id, cat.id] })
  assert.equal(group.status, 200, group.text)
  const chatId = group.body.data.group_id as number
  const failures: string[] = []
  const check = async (what: string, pending: Promise<{ status: number; text: string }>) => {
    const res = await pending
    if (res.status !== 200) failures.push(`${what}: ${res.status} ${res.text}`)
    return res
  }
  const deleted: number[] = []
  for (let round = 0; round < 30; round++) {
    // two new messages nobody has read: one is reacted to and edited, the other deleted for everyone
    const kept = (await owner.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `kept ${round}` })).body.data.message_id as number
    const gone = (await owner.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `gone ${round}` })).body.data.message_id as number
    await Promise.all([
      check(`react ${round}`, ann.api.post(`${V2}/messages/${kept}/reaction`, { emoji: EMOJI[round % EMOJI.length] })),
      check(`edit ${round}`, owner.api.post(`${V2}/messages/${kept}/edit`, { content: `kept ${round}, edited` })),
      check(`delete ${round}`, owner.api.delete(`${V2}/messages/${gone}`, { query: { for_all: true } })),
      // each reader also sends: their sends take the chat's row, then their member row
      ...[bob, cat].flatMap((user, i) => [
        check(`send ${i} ${round}`, user.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `from ${i} in ${round}` })),
        check(`read ${i} ${round}`, user.api.post(`${V2}/messages/${kept}/read`)),
      ]),
    ])
    deleted.push(gone)
  }
  assert.deepEqual(failures, [])
  // positive control: every change landed
  const items = (await wholeHistory(owner, chatId)) as { message_id: number; content: string; reactions: Record<string, number> }[]
  const kept = items.filter((m) => m.content.startsWith('kept '))
  assert.equal(kept.length, 30)
  assert.ok(
    kept.every((m) => m.content.endsWith(', edited') && Object.keys(m.reactions).length === 1),
    'every kept message edited and reacted to',
  )
  assert.ok(!items.some((m) => deleted.includes(m.message_id)), 'the deleted messages are gone')
  assert.equal(items.filter((m) => m.content.startsWith('from ')).length, 60)
})
