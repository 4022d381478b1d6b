/** Contacts, black-box: add (once), list (the interface's shape, paginated), remove, refusals. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { ISO, registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'

const server = await startTestServer()
const users = (n: number) => registerUsers(server, n)

async function list(user: TestUser, query: Record<string, number> = {}) {
  const res = await user.api.get(`${V2}/contacts`, { query })
  assert.equal(res.status, 200, res.text)
  return res.body.data
}

test('add, rename, list and remove a contact', async () => {
  const [me, bob, carol] = await users(3)
  const added = await me.api.post(`${V2}/contacts/add`, { user_id: bob.id })
  assert.equal(added.status, 200, added.text)
  const contact = added.body.data
  assert.equal(contact.user_id, bob.id)
  assert.equal(contact.username, bob.username)
  assert.equal(contact.custom_name, null)
  assert.match(contact.added_at, ISO)
  for (const field of ['display_name', 'avatar_url', 'is_online', 'last_seen', 'is_premium', 'status_emoji']) assert.ok(field in contact, field)

  assertError(await me.api.post(`${V2}/contacts/add`, { user_id: bob.id, display_name: 'Bobby' }), 409, 'conflict', 'twice')
  assert.equal((await list(me)).total, 1, 'never a second row')
  assert.equal((await me.api.delete(`${V2}/contacts/remove`, { query: { user_id: bob.id } })).status, 200)
  const renamed = await me.api.post(`${V2}/contacts/add`, { user_id: bob.id, display_name: '  Bobby ' })
  assert.equal(renamed.body.data.custom_name, 'Bobby', 'trimmed')

  await me.api.post(`${V2}/contacts/add`, { user_id: carol.id, display_name: 'Aunt Carol' })
  const all = await list(me)
  assert.deepEqual(all.contacts.map((c: any) => c.custom_name), ['Aunt Carol', 'Bobby'], 'by name')
  assert.deepEqual([all.total, all.page, all.per_page, all.pages], [2, 1, 20, 1])
  const page2 = await list(me, { per_page: 1, page: 2 })
  assert.deepEqual([page2.contacts.length, page2.contacts[0].user_id, page2.pages], [1, bob.id, 2])
  assert.deepEqual((await list(bob)).contacts, [], "contacts are the owner's own")

  const removed = await me.api.delete(`${V2}/contacts/remove`, { query: { user_id: bob.id } })
  assert.equal(removed.status, 200, removed.text)
  assert.equal(removed.body.data.user_id, bob.id)
  assert.deepEqual((await list(me)).contacts.map((c: any) => c.user_id), [carol.id])
  assertError(await me.api.delete(`${V2}/contacts/remove`, { query: { user_id: bob.id } }), 404, 'not_found', 'not a contact any more')
})

test('contacts refusals: myself, unknown users, bad bodies, no session', async () => {
  const [me] = await users(1)
  assertError(await me.api.post(`${V2}/contacts/add`, { user_id: me.id }), 400, 'validation_error', 'myself')
  assertError(await me.api.post(`${V2}/contacts/add`, { user_id: 987_654_321 }), 404, 'not_found', 'unknown user')
  assertError(await me.api.post(`${V2}/contacts/add`, {}), 400, 'validation_error', 'no user_id')
  assertError(await me.api.post(`${V2}/contacts/add`, { user_id: 'x' }), 400, 'validation_error', 'not an id')
  assertError(await me.api.post(`${V2}/contacts/add`, { user_id: 2, display_name: 'x'.repeat(65) }), 400, 'validation_error', 'name too long')
  assertError(await me.api.delete(`${V2}/contacts/remove`), 400, 'validation_error', 'no user_id')
  assertError(await me.api.get(`${V2}/contacts`, { query: { per_page: 101 } }), 400, 'validation_error', 'per_page')
  assert.equal((await server.api.get(`${V2}/contacts`)).status, 401)
  assert.equal((await list(me)).total, 0)
})

test('a contact who blocked me, or whom I blocked, shows no presence; is_blocked says whether I blocked them', async () => {
  const [me, bob] = await users(2)
  await me.api.post(`${V2}/contacts/add`, { user_id: bob.id })
  assert.equal((await list(me)).contacts[0].is_blocked, false)
  await me.api.post(`${V2}/block`, { user_id: bob.id })
  const blocked = (await list(me)).contacts[0]
  assert.deepEqual([blocked.is_blocked, blocked.is_online, blocked.last_seen], [true, false, null])
})
