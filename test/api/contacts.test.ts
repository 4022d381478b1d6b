/** Contacts, black-box: add (once), list (the API's shape, paginated), remove, import by phone, events, refusals. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { ISO, registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { assertDelivered, assertNone, TestSocket } from '../harness/socket.js'

const server = await startTestServer({ env: { PHONE_DEFAULT_REGION: 'RU' } })
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
  for (const field of ['display_name', 'avatar_url', 'is_online', 'last_seen', 'is_premium', 'status_emoji'])
    assert.ok(field in contact, field)

  assertError(await me.api.post(`${V2}/contacts/add`, { user_id: bob.id, display_name: 'Bobby' }), 409, 'conflict', 'twice')
  assert.equal((await list(me)).total, 1, 'never a second row')
  assert.equal((await me.api.delete(`${V2}/contacts/remove`, { query: { user_id: bob.id } })).status, 200)
  const renamed = await me.api.post(`${V2}/contacts/add`, { user_id: bob.id, display_name: '  Bobby ' })
  assert.equal(renamed.body.data.custom_name, 'Bobby', 'trimmed')

  await me.api.post(`${V2}/contacts/add`, { user_id: carol.id, display_name: 'Aunt Carol' })
  const all = await list(me)
  assert.deepEqual(
    all.contacts.map((c: any) => c.custom_name),
    ['Aunt Carol', 'Bobby'],
    'by name',
  )
  assert.deepEqual([all.total, all.page, all.per_page, all.pages], [2, 1, 20, 1])
  const page2 = await list(me, { per_page: 1, page: 2 })
  assert.deepEqual([page2.contacts.length, page2.contacts[0].user_id, page2.pages], [1, bob.id, 2])
  assert.deepEqual((await list(bob)).contacts, [], "contacts are the owner's own")

  const removed = await me.api.delete(`${V2}/contacts/remove`, { query: { user_id: bob.id } })
  assert.equal(removed.status, 200, removed.text)
  assert.equal(removed.body.data.user_id, bob.id)
  assert.deepEqual(
    (await list(me)).contacts.map((c: any) => c.user_id),
    [carol.id],
  )
  assertError(await me.api.delete(`${V2}/contacts/remove`, { query: { user_id: bob.id } }), 404, 'not_found', 'not a contact any more')
})

test('contacts refusals: myself, unknown users, bad bodies, no session', async () => {
  const [me] = await users(1)
  assertError(await me.api.post(`${V2}/contacts/add`, { user_id: me.id }), 400, 'validation_error', 'myself')
  assertError(await me.api.post(`${V2}/contacts/add`, { user_id: 987_654_321 }), 404, 'not_found', 'unknown user')
  assertError(await me.api.post(`${V2}/contacts/add`, {}), 400, 'validation_error', 'no user_id')
  assertError(await me.api.post(`${V2}/contacts/add`, { user_id: 'x' }), 400, 'validation_error', 'not an id')
  assertError(
    await me.api.post(`${V2}/contacts/add`, { user_id: 2, display_name: 'x'.repeat(65) }),
    400,
    'validation_error',
    'name too long',
  )
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

// ---------------------------------------------------------------- import by phone

async function setPhone(user: TestUser, phone: string, audience?: 'everyone' | 'contacts' | 'nobody') {
  const res = await user.api.post(`${V2}/profile/update`, { phone })
  assert.equal(res.status, 200, res.text)
  if (audience) assert.equal((await user.api.post(`${V2}/privacy/update`, { phone: audience })).status, 200)
}

async function importPhones(user: TestUser, phones: string[]) {
  const res = await user.api.post(`${V2}/contacts/import`, { phones })
  assert.equal(res.status, 200, res.text)
  return res.body.data as { imported: any[]; not_found: string[] }
}

let nextNumber = 1_000_000
/** A fresh valid Russian mobile number: international and local spellings of it. */
function number() {
  const n = String(nextNumber++).padStart(7, '0')
  return { e164: `+7916${n}`, local: `8 916 ${n.slice(0, 3)}-${n.slice(3, 5)}-${n.slice(5)}` }
}

test('import: numbers in any spelling become E.164 and find the users who may be found by them', async () => {
  const [me, open, friendsOnly, hidden, keepsMe, closed] = await users(6)
  const [a, b, c, d, e, f] = [number(), number(), number(), number(), number(), number()]
  await setPhone(open, a.e164, 'everyone')
  await setPhone(friendsOnly, b.e164) // the default: contacts
  await setPhone(hidden, c.e164, 'nobody')
  await setPhone(keepsMe, d.e164, 'contacts')
  await keepsMe.api.post(`${V2}/contacts/add`, { user_id: me.id })
  await setPhone(closed, f.e164, 'everyone')
  await server.ctx.db.updateTable('users').set({ is_active: 0 }).where('id', '=', closed.id).execute()

  const result = await importPhones(me, [a.local, b.e164, c.e164, d.local, e.e164, f.e164, 'not a phone', a.e164])
  assert.deepEqual(
    result.imported.map((contact) => contact.user_id).sort(),
    [open.id, keepsMe.id].sort(),
    'found: everyone, and contacts-only by someone who keeps me',
  )
  // nobody, contacts-only strangers, unused and closed accounts all look alike
  assert.deepEqual(result.not_found.sort(), [b.e164, c.e164, e.e164, f.e164, 'not a phone'].sort())
  for (const contact of result.imported)
    for (const field of ['username', 'display_name', 'custom_name', 'added_at', 'is_online']) assert.ok(field in contact, field)
  assert.deepEqual((await list(me)).contacts.map((c: any) => c.user_id).sort(), [open.id, keepsMe.id].sort(), 'added once each')

  // again: already contacts are answered, never added twice; the rest still not found
  const again = await importPhones(me, [a.e164, d.e164, c.e164])
  assert.deepEqual(again.imported.map((contact) => contact.user_id).sort(), [open.id, keepsMe.id].sort())
  assert.deepEqual(again.not_found, [c.e164])
  assert.equal((await list(me)).total, 2)
})

test('import: a user who blocked me, or whom I blocked, is not found; myself neither', async () => {
  const [me, blocker, blockedByMe] = await users(3)
  const [x, y, z] = [number(), number(), number()]
  await setPhone(blocker, x.e164, 'everyone')
  await setPhone(blockedByMe, y.e164, 'everyone')
  await setPhone(me, z.e164, 'everyone')
  await blocker.api.post(`${V2}/block`, { user_id: me.id })
  await me.api.post(`${V2}/block`, { user_id: blockedByMe.id })
  const result = await importPhones(me, [x.e164, y.e164, z.e164])
  assert.deepEqual(result, { imported: [], not_found: [x.e164, y.e164, z.e164] })
  // control: after unblocking, the same number is found
  await me.api.post(`${V2}/unblock`, { user_id: blockedByMe.id })
  assert.deepEqual(
    (await importPhones(me, [y.e164])).imported.map((c) => c.user_id),
    [blockedByMe.id],
  )
})

test('import refusals: no list, an empty list, too many, not strings, too long; nothing added', async () => {
  const [me] = await users(1)
  assertError(await me.api.post(`${V2}/contacts/import`, {}), 400, 'validation_error', 'no phones')
  assertError(await me.api.post(`${V2}/contacts/import`, { phones: [] }), 400, 'validation_error', 'empty')
  assertError(
    await me.api.post(`${V2}/contacts/import`, { phones: Array.from({ length: 1001 }, (_, i) => `+7916${String(i).padStart(7, '0')}`) }),
    400,
    'validation_error',
    '1001',
  )
  assertError(await me.api.post(`${V2}/contacts/import`, { phones: [79161234567] }), 400, 'validation_error', 'a number')
  assertError(await me.api.post(`${V2}/contacts/import`, { phones: ['+7'.padEnd(33, '1')] }), 400, 'validation_error', 'too long')
  assertError(await me.api.post(`${V2}/contacts/import`, 'phones'), 400, 'validation_error', 'not an object')
  assert.equal((await server.api.post(`${V2}/contacts/import`, { phones: ['+79160000000'] })).status, 401)
  assert.equal((await list(me)).total, 0)
})

test("contact changes reach the owner's other devices (contact.added, contact.removed) and no one else's", async () => {
  const [me, bob] = await users(2)
  const mine = await TestSocket.connect(server.url, me.token)
  const bobs = await TestSocket.connect(server.url, bob.token)
  const [added] = await assertDelivered(mine, 'contact.added', () =>
    me.api.post(`${V2}/contacts/add`, { user_id: bob.id, display_name: 'B' }),
  )
  assert.deepEqual([added.data.contact.user_id, added.data.contact.custom_name], [bob.id, 'B'])
  assert.equal(typeof added.seq, 'number', 'logged in my update log')
  const [removed] = await assertDelivered(mine, 'contact.removed', () =>
    me.api.delete(`${V2}/contacts/remove`, { query: { user_id: bob.id } }),
  )
  assert.deepEqual(removed.data, { user_id: bob.id })
  await assertNone(bobs, 'contact.added', 300, "to the contact's devices")
  await assertDelivered(bobs, 'contact.added', () => bob.api.post(`${V2}/contacts/add`, { user_id: me.id }))
})
