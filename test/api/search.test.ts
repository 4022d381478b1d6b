/** Global search and the search history, black-box: matching, ranking, exclusions, limits, history. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { V2 } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'

const server = await startTestServer()

async function search(user: TestUser, q: string, query: Record<string, number> = {}) {
  const res = await user.api.get(`${V2}/search/global`, { query: { q, ...query } })
  assert.equal(res.status, 200, res.text)
  return res.body
}
const names = (body: any) => body.items.map((item: any) => item.username)

test('case-insensitive on username and display name; prefix matches first; Peer + bio + is_contact', async () => {
  const tag = uniqueName('k')
    .slice(-6)
    .replace(/[^a-z0-9]/gi, 'x')
    .toLowerCase()
  const exact = await server.registerUser({ username: `${tag}` })
  const prefix = await server.registerUser({ username: `${tag}_prefix` })
  const byName = await server.registerUser({ username: uniqueName('n'), display_name: `${tag.toUpperCase()} Smith` })
  const inside = await server.registerUser({ username: `zz_${tag}_inside` })
  const me = await server.registerUser()
  await me.api.post(`${V2}/contacts/add`, { user_id: inside.id })

  const body = await search(me, tag.toUpperCase())
  assert.deepEqual(
    names(body),
    [exact.username, prefix.username, byName.username, inside.username],
    'exact, username prefix, name prefix, inside',
  )
  assert.equal(body.total, 4)
  const item = body.items[3]
  assert.deepEqual([item.user_id, item.is_contact, typeof item.bio, typeof item.is_online], [inside.id, true, 'string', 'boolean'])
  assert.equal(body.items[0].is_contact, false)
  for (const field of ['display_name', 'avatar_url', 'last_seen', 'status_emoji', 'is_premium', 'is_bot']) assert.ok(field in item, field)

  const page2 = await search(me, tag, { per_page: 3, page: 2 })
  assert.deepEqual([names(page2), page2.total, page2.pages], [[inside.username], 4, 2])
  // two characters: prefixes only
  assert.ok(names(await search(me, tag.slice(0, 2))).includes(exact.username))
})

test('left out: me, blocked users (either way), deactivated accounts', async () => {
  const tag = `q${uniqueName('')
    .slice(-5)
    .replace(/[^a-z0-9]/gi, 'y')
    .toLowerCase()}`
  const [me, blockedByMe, blockingMe, banned, visible] = await Promise.all(
    ['me', 'blocked', 'blocker', 'banned', 'visible'].map((suffix) => server.registerUser({ username: `${tag}_${suffix}` })),
  )
  const before = names(await search(me, tag))
  assert.deepEqual(
    before.sort(),
    [blockedByMe, blockingMe, banned, visible].map((u) => u.username).sort(),
    'everyone but me, before (control)',
  )
  await me.api.post(`${V2}/block`, { user_id: blockedByMe.id })
  await blockingMe.api.post(`${V2}/block`, { user_id: me.id })
  const admin = await server.createAdmin()
  assert.equal((await admin.api.post(`/api/admin/users/${banned.id}/ban`, { reason: 'spam' })).status, 200)
  assert.deepEqual(names(await search(me, tag)), [visible.username])
})

test('limits: q of at least 2 characters, per_page at most 50', async () => {
  const me = await server.registerUser()
  assertError(await me.api.get(`${V2}/search/global`, { query: { q: 'a' } }), 400, 'validation_error', 'one character')
  assertError(await me.api.get(`${V2}/search/global`, { query: { q: '  a ' } }), 400, 'validation_error', 'one after trimming')
  assertError(await me.api.get(`${V2}/search/global`), 400, 'validation_error', 'no q')
  assertError(await me.api.get(`${V2}/search/global`, { query: { q: 'ab', per_page: 51 } }), 400, 'validation_error', 'per_page 51')
  assert.equal((await me.api.get(`${V2}/search/global`, { query: { q: 'ab', per_page: 50 } })).status, 200, 'per_page 50')
  assert.equal((await me.api.get(`${V2}/search/global`, { query: { q: '%_"\'\\' } })).status, 200, 'wildcards and quotes are text')
  assert.equal((await server.api.get(`${V2}/search/global`, { query: { q: 'ab' } })).status, 401)
})

test('search history: own, newest first, de-duplicated, bounded to 20; DELETE clears it', async () => {
  const [me, other] = [await server.registerUser(), await server.registerUser()]
  await search(me, 'first')
  await search(me, 'second')
  await search(me, 'first')
  const res = await me.api.get(`${V2}/search/history`)
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(
    res.body.items.map((i: any) => [i.search_query, i.search_type]),
    [
      ['first', 'global'],
      ['second', 'global'],
    ],
  )
  assert.deepEqual((await other.api.get(`${V2}/search/history`)).body.items, [], 'my history is mine')
  for (let i = 0; i < 25; i++) await search(me, `query ${i}`)
  const bounded = (await me.api.get(`${V2}/search/history`)).body.items
  assert.equal(bounded.length, 20)
  assert.equal(bounded[0].search_query, 'query 24')
  assertError(await me.api.get(`${V2}/search/global`, { query: { q: 'x' } }), 400, 'validation_error')
  assert.equal((await me.api.get(`${V2}/search/history`)).body.items[0].search_query, 'query 24', 'a refused search is not recorded')
  const cleared = await me.api.delete(`${V2}/search/history`)
  assert.equal(cleared.status, 200, cleared.text)
  assert.deepEqual((await me.api.get(`${V2}/search/history`)).body.items, [])
})
