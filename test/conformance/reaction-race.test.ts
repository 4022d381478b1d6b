/**
 * Found by reading what the conformance run compares: a `reaction.updated` event
 * carries the message's whole reactions map, read inside the reacting transaction. On PostgreSQL
 * two members reacting to one message at once each read the map without the other's reaction, and
 * the event logged last could say less than the message holds: a client that applies its events
 * in order keeps a wrong count. Every round here has members react at once; the last event must
 * say what the history says.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'

const server = await startTestServer()
const EMOJI = ['👍', '❤️', '😂', '🔥', '🎉', '👀']

test('members reacting to one message at once: the last reaction.updated event holds every reaction', async () => {
  const users = await Promise.all(Array.from({ length: 6 }, () => server.registerUser()))
  const [owner, ...members] = users
  const group = await owner.api.post(`${V2}/groups/create`, { title: 'Reactions', member_ids: members.map((m) => m.id) })
  assert.equal(group.status, 200, group.text)
  const chatId = group.body.data.group_id as number
  for (let round = 0; round < 15; round++) {
    const message = (await owner.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `react ${round}` })).body.data
    const answers = await Promise.all(
      users.map((user, i) => user.api.post(`${V2}/messages/${message.message_id}/reaction`, { emoji: EMOJI[i] })),
    )
    for (const res of answers) assert.equal(res.status, 200, res.text)
    const history = await owner.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 1 } })
    const held = history.body.items[0].reactions
    // positive control: every reaction landed
    assert.deepEqual(Object.keys(held).sort(), [...EMOJI].sort(), `round ${round}: every reaction is on the message`)
    const log = await owner.api.get(`${V2}/chat/updates`, { query: { chat_id: chatId, since: 0, limit: 1000 } })
    const events = (log.body.data.updates as { type: string; data: { message_id: number; reactions: Record<string, number> } }[]).filter(
      (u) => u.type === 'reaction.updated' && u.data.message_id === message.message_id,
    )
    assert.equal(events.length, users.length, 'one event per reaction')
    assert.deepEqual(events.at(-1)!.data.reactions, held, `round ${round}: the last event says what the message holds`)
  }
})
