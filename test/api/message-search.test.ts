/**
 * Message search, black-box: GET V2/search/messages over the chats I belong to, by words (each a
 * prefix, all required), newest first with keyset paging, kept in step with sends, edits and
 * deletes, and never showing what I cannot read.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { assertError } from '../harness/assert.js'
import { createChannel, createGroup } from '../harness/fixtures.js'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'

const server = await startTestServer()
const users = (n: number) => registerUsers(server, n)

async function search(user: TestUser, q: string, extra: Record<string, string | number> = {}) {
  const res = await user.api.get(`${V2}/search/messages`, { query: { q, ...extra } })
  assert.equal(res.status, 200, res.text)
  return res.body.data as { items: any[]; next_before_id: number | null }
}
const contents = async (user: TestUser, q: string, extra: Record<string, string | number> = {}) =>
  (await search(user, q, extra)).items.map((m) => m.content)

async function post(user: TestUser, chatId: number, content: string) {
  const res = await user.api.post(`${V2}/messages/send`, { chat_id: chatId, content })
  assert.equal(res.status, 200, res.text)
  return res.body.data
}

test('words match as prefixes, case- and accent-insensitively, all of them, newest first, in the V2 message shape', async () => {
  const [alice, bob] = await users(2)
  await send(alice, bob, 'Lunch at the Café tomorrow?')
  await send(bob, alice, 'lunch sounds good')
  await send(alice, bob, 'Dinner instead')
  await send(bob, alice, 'Ланч в пятницу')
  assert.deepEqual(await contents(alice, 'lunch'), ['lunch sounds good', 'Lunch at the Café tomorrow?'], 'newest first')
  assert.deepEqual(await contents(bob, 'LUN'), ['lunch sounds good', 'Lunch at the Café tomorrow?'], 'a prefix, any case')
  assert.deepEqual(await contents(alice, 'cafe'), ['Lunch at the Café tomorrow?'], 'accents folded')
  assert.deepEqual(await contents(alice, 'lunch tomor'), ['Lunch at the Café tomorrow?'], 'every word')
  assert.deepEqual(await contents(alice, 'lunch, tomor!'), ['Lunch at the Café tomorrow?'], 'punctuation is not a word')
  assert.deepEqual(await contents(alice, 'ланч'), ['Ланч в пятницу'], 'Cyrillic')
  assert.deepEqual(await contents(alice, 'breakfast'), [], 'no match')
  const [found] = (await search(alice, 'dinner')).items
  for (const field of ['message_id', 'chat_id', 'sender_id', 'sender_username', 'content', 'timestamp', 'is_read'])
    assert.ok(field in found, field)
  const history = await alice.api.get(`${V2}/search/history`)
  assert.equal(history.body.items[0].search_query, 'dinner')
  assert.equal(history.body.items[0].search_type, 'messages')
})

test("only my chats: another pair's messages, a group I left and a chat I am not in stay out", async () => {
  const [alice, bob, carol, dave] = await users(4)
  await send(alice, bob, 'secret rendezvous at noon')
  await send(carol, dave, 'secret rendezvous at dusk')
  const group = await createGroup(carol, { member_ids: [alice.id] })
  await post(carol, group.group_id, 'secret rendezvous in the group')
  assert.deepEqual(await contents(alice, 'rendezvous'), ['secret rendezvous in the group', 'secret rendezvous at noon'])
  assert.deepEqual(await contents(bob, 'rendezvous'), ['secret rendezvous at noon'])
  assert.deepEqual(await contents(alice, 'rendezvous', { chat_id: group.group_id }), ['secret rendezvous in the group'], 'one chat')
  const dusk = await dave.api.get(`${V2}/chat_list`)
  const carolDaveChat = dusk.body.items.find((item: any) => item.peer?.user_id === carol.id).chat_id
  assertError(
    await alice.api.get(`${V2}/search/messages`, { query: { q: 'rendezvous', chat_id: carolDaveChat } }),
    404,
    'not_found',
    "someone else's chat",
  )
  assertError(
    await alice.api.get(`${V2}/search/messages`, { query: { q: 'rendezvous', chat_id: 987_654 } }),
    404,
    'not_found',
    'unknown chat',
  )

  assert.equal((await alice.api.post(`${V2}/groups/leave`, { chat_id: group.group_id })).status, 200)
  assert.deepEqual(await contents(alice, 'rendezvous'), ['secret rendezvous at noon'], 'a group I left')

  // a public channel can be searched by anyone who can read it
  const channel = await createChannel(dave, {}, [])
  await post(dave, channel.channel_id, 'rendezvous announcement')
  assert.deepEqual(await contents(alice, 'rendezvous', { chat_id: channel.channel_id }), ['rendezvous announcement'])
  assert.deepEqual(await contents(alice, 'announcement'), [], 'not among my chats until I subscribe')
  await alice.api.post(`${V2}/channels/subscribe`, { channel_id: channel.channel_id })
  assert.deepEqual(await contents(alice, 'announcement'), ['rendezvous announcement'])
})

test('kept in step: an edit moves a message to its new words, a delete for everyone removes it, a delete for me hides it from me only', async () => {
  const [alice, bob] = await users(2)
  const typo = await send(alice, bob, 'meet at the libary')
  const gone = await send(alice, bob, 'meet at the harbour')
  const mine = await send(bob, alice, 'meet at the station')
  assert.equal((await alice.api.post(`${V2}/messages/${typo.message_id}/edit`, { content: 'meet at the library' })).status, 200)
  assert.deepEqual(await contents(bob, 'libary'), [], 'the old word is gone')
  assert.deepEqual(await contents(bob, 'library'), ['meet at the library'])
  assert.equal((await alice.api.delete(`${V2}/messages/${gone.message_id}`, { query: { for_all: 'true' } })).status, 200)
  assert.deepEqual(await contents(bob, 'harbour'), [], 'deleted for everyone')
  assert.deepEqual(await contents(alice, 'harbour'), [])
  assert.equal((await alice.api.delete(`${V2}/messages/${mine.message_id}`)).status, 200)
  assert.deepEqual(await contents(alice, 'station'), [], 'deleted for me')
  assert.deepEqual(await contents(bob, 'station'), ['meet at the station'], 'still there for bob')
  assert.deepEqual(await contents(bob, 'meet'), ['meet at the station', 'meet at the library'])
})

test('encrypted messages are never found', async () => {
  const [alice, bob] = await users(2)
  const sent = await alice.api.post(`${V2}/messages/send`, {
    receiver_id: bob.id,
    is_encrypted: true,
    encrypted_content: 'cGxhaW4gd29yZHM=',
    encryption_key_id: 'k1',
  })
  assert.equal(sent.status, 200, sent.text)
  await send(alice, bob, 'plain words')
  assert.deepEqual(await contents(bob, 'plain'), ['plain words'], 'control: the clear one is')
  assert.deepEqual(await contents(bob, 'cGxhaW4gd29yZHM'), [])
})

test('keyset paging: limit and next_before_id walk every match once, newest first', async () => {
  const [alice, bob] = await users(2)
  const sent = []
  for (let i = 1; i <= 5; i++) sent.push((await send(i % 2 ? alice : bob, i % 2 ? bob : alice, `report number ${i}`)).message_id)
  const seen: string[] = []
  let before: number | null = null
  for (let page = 0; page < 5; page++) {
    const result = await search(alice, 'report', { limit: 2, ...(before ? { before_id: before } : {}) })
    seen.push(...result.items.map((m) => m.content))
    before = result.next_before_id
    if (before === null) break
  }
  assert.deepEqual(seen, ['report number 5', 'report number 4', 'report number 3', 'report number 2', 'report number 1'])
  assert.equal(before, null, 'the end is marked')
})

test('refusals: a query with no word of 2 characters, bad limits and ids, no session; short words beside longer ones are left out', async () => {
  const [alice, bob] = await users(2)
  await send(alice, bob, 'a quick note')
  for (const q of ['', 'a', '!!', '  ', '* ?'])
    assertError(await alice.api.get(`${V2}/search/messages`, { query: { q } }), 400, 'validation_error', `q ${JSON.stringify(q)}`)
  assertError(await alice.api.get(`${V2}/search/messages`), 400, 'validation_error', 'no q')
  assertError(await alice.api.get(`${V2}/search/messages`, { query: { q: 'note', limit: 51 } }), 400, 'validation_error', 'limit 51')
  assertError(await alice.api.get(`${V2}/search/messages`, { query: { q: 'note', limit: 0 } }), 400, 'validation_error', 'limit 0')
  assertError(await alice.api.get(`${V2}/search/messages`, { query: { q: 'note', before_id: 'x' } }), 400, 'validation_error', 'before_id')
  assertError(await alice.api.get(`${V2}/search/messages`, { query: { q: 'x'.repeat(257) } }), 400, 'validation_error', 'too long')
  assert.equal((await server.api.get(`${V2}/search/messages`, { query: { q: 'note' } })).status, 401)
  assert.deepEqual(await contents(alice, 'a note'), ['a quick note'], '"a" is left out, "note" kept')
  assert.deepEqual(await contents(alice, '"note" quick*'), ['a quick note'], 'quotes and stars are not query syntax')
  assert.deepEqual(await contents(alice, 'note OR lunch'), [], 'neither is OR: every word must match')
})

test('a word in most messages and a rare one give the same newest-first answers as the messages themselves (both query plans)', async () => {
  // a server of its own: its statistics (PostgreSQL picks a plan by how common a word is) are read
  // after ANALYZE below, not before
  const own = await startTestServer()
  try {
    const [alice, bob, carol] = await registerUsers(own, 3)
    const rows: any[] = []
    for (let i = 0; i < 120; i++) {
      const [from, to] = i % 3 === 0 ? [carol, alice] : [alice, bob]
      const content = `ubiquitous ${i % 7 === 0 ? 'seldom' : 'filler'} line ${i}`
      rows.push({ ...(await send(from, to, content)), content })
    }
    await sql`analyze`.execute(own.ctx.db)
    const expect = (where: (row: any) => boolean, n: number) =>
      rows
        .filter(where)
        .reverse()
        .slice(0, n)
        .map((row) => row.content)
    const found = async (q: string, extra: Record<string, string | number> = {}) => {
      const res = await alice.api.get(`${V2}/search/messages`, { query: { q, limit: 15, ...extra } })
      assert.equal(res.status, 200, res.text)
      return res.body.data.items.map((m: any) => m.content)
    }
    assert.deepEqual(
      await found('ubiquitous'),
      expect(() => true, 15),
      'common: newest first',
    )
    assert.deepEqual(
      await found('seldom'),
      expect((row) => row.content.includes('seldom'), 15),
      'rare: newest first',
    )
    const bobChat = rows.find((row) => row.receiver_id === bob.id).chat_id
    assert.deepEqual(
      await found('ubiquitous', { chat_id: bobChat }),
      expect((row) => row.chat_id === bobChat, 15),
      'common in one chat',
    )
    const before = rows[60].message_id
    assert.deepEqual(
      await found('ubiq', { before_id: before }),
      expect((row) => row.message_id < before, 15),
      'common, older than a message',
    )
    assert.deepEqual(
      await found('seldom ubiquitous'),
      expect((row) => row.content.includes('seldom'), 15),
      'rare and common together',
    )
  } finally {
    await own.close()
  }
})
