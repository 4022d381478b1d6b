/** Settings (defaults, one key at a time, bounds) and reports (targets, visibility, one open report per target), black-box. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { createChannel } from '../harness/fixtures.js'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'

const server = await startTestServer()
const users = (n: number) => registerUsers(server, n)
const settingsOf = async (user: TestUser) => {
  const res = await user.api.get(`${V2}/settings`)
  assert.equal(res.status, 200, res.text)
  return res.body.data
}
const setting = (user: TestUser, key: string, value: unknown) => user.api.post(`${V2}/settings/update`, { key, value })

// ---------------------------------------------------------------- settings

test('settings: defaults, a key set with any JSON value, null resets it; each user their own', async () => {
  const [alice, bob] = await users(2)
  assert.deepEqual(await settingsOf(alice), { user_id: alice.id, settings: { theme: 'system', notifications: true, language: 'en' } })
  const dark = await setting(alice, 'theme', 'dark')
  assert.equal(dark.status, 200, dark.text)
  assert.equal(dark.body.data.settings.theme, 'dark')
  await setting(alice, 'notifications', { messages: false, calls: true })
  await setting(alice, 'chat.font_size', 17)
  const now = await settingsOf(alice)
  assert.deepEqual(now.settings, { theme: 'dark', notifications: { messages: false, calls: true }, language: 'en', 'chat.font_size': 17 })
  assert.deepEqual((await settingsOf(bob)).settings, { theme: 'system', notifications: true, language: 'en' }, "alice's settings are hers")
  await setting(alice, 'theme', null)
  assert.equal((await settingsOf(alice)).settings.theme, 'system', 'null puts the default back')
})

test('settings refusals: bad keys, no value, over 16 KiB; nothing written', async () => {
  const [alice] = await users(1)
  for (const key of ['', '__proto__', 'constructor ', '1abc', 'a'.repeat(65), 'with space', 'ü']) {
    assertError(await setting(alice, key, 1), 400, 'validation_error', JSON.stringify(key))
  }
  assertError(await alice.api.post(`${V2}/settings/update`, { key: 'theme' }), 400, 'validation_error', 'no value')
  assertError(await setting(alice, 'blob', 'x'.repeat(16 * 1024)), 400, 'validation_error', 'over 16 KiB')
  assert.deepEqual((await settingsOf(alice)).settings, { theme: 'system', notifications: true, language: 'en' })
  // at the bound: accepted (positive control)
  const fits = await setting(alice, 'blob', 'x'.repeat(16 * 1024 - 200))
  assert.equal(fits.status, 200, fits.text)
  assert.equal((await server.api.get(`${V2}/settings`)).status, 401)
})

test('settings: concurrent updates of different keys all land', async () => {
  const [alice] = await users(1)
  await Promise.all(Array.from({ length: 12 }, (_, i) => setting(alice, `k${i}`, i)))
  const { settings } = await settingsOf(alice)
  for (let i = 0; i < 12; i++) assert.equal(settings[`k${i}`], i)
})

// ---------------------------------------------------------------- reports

test('report a user or a message: pending, one open report per target', async () => {
  const [alice, bob] = await users(2)
  const message = await send(bob, alice, 'spam spam spam')
  const res = await alice.api.post(`${V2}/report`, { reported_user_id: bob.id, reason: 'spam' })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(Object.keys(res.body.data).sort(), ['report_id', 'status'])
  assert.equal(res.body.data.status, 'pending')
  const again = await alice.api.post(`${V2}/report`, { reported_user_id: bob.id, reason: 'still spam' })
  assert.equal(again.body.data.report_id, res.body.data.report_id, 'a repeat answers the open report')

  const aboutMessage = await alice.api.post(`${V2}/report`, { reported_message_id: message.message_id, reason: 'spam message' })
  assert.equal(aboutMessage.status, 200, aboutMessage.text)
  assert.notEqual(aboutMessage.body.data.report_id, res.body.data.report_id, 'the message is another target')
  const both = await alice.api.post(`${V2}/report`, { reported_user_id: bob.id, reported_message_id: message.message_id, reason: 'x' })
  assert.equal(both.body.data.report_id, aboutMessage.body.data.report_id)

  const rows = await server.ctx.db.selectFrom('reports').selectAll().where('reporter_id', '=', alice.id).orderBy('id').execute()
  assert.deepEqual(
    rows.map((r) => [r.reported_user_id, r.reported_message_id, r.reason, r.status]),
    [
      [bob.id, null, 'spam', 'pending'],
      [bob.id, message.message_id, 'spam message', 'pending'],
    ],
  )
  // once resolved, the same target may be reported again
  await server.ctx.db.updateTable('reports').set({ status: 'resolved' }).where('id', '=', res.body.data.report_id).execute()
  const fresh = await alice.api.post(`${V2}/report`, { reported_user_id: bob.id, reason: 'back again' })
  assert.notEqual(fresh.body.data.report_id, res.body.data.report_id)
})

test('report refusals: no reason, no target, unknown user, myself, a message I cannot see, a mismatched pair; nothing written', async () => {
  const [alice, bob, carol] = await users(3)
  const theirs = await send(bob, carol, 'private between bob and carol')
  const mine = await send(bob, alice, 'to alice')
  const report = (body: unknown) => alice.api.post(`${V2}/report`, body)
  assertError(await report({ reported_user_id: bob.id }), 400, 'validation_error', 'no reason')
  assertError(await report({ reported_user_id: bob.id, reason: '   ' }), 400, 'validation_error', 'blank reason')
  assertError(await report({ reported_user_id: bob.id, reason: 'x'.repeat(1001) }), 400, 'validation_error', 'long reason')
  assertError(await report({ reason: 'who?' }), 400, 'validation_error', 'no target')
  assertError(await report({ reported_user_id: 987_654_321, reason: 'x' }), 404, 'not_found', 'unknown user')
  assertError(await report({ reported_user_id: alice.id, reason: 'x' }), 400, 'validation_error', 'myself')
  assertError(await report({ reported_message_id: theirs.message_id, reason: 'x' }), 404, 'not_found', "a message in others' chat")
  assertError(
    await report({ reported_message_id: mine.message_id, reported_user_id: carol.id, reason: 'x' }),
    400,
    'validation_error',
    'not its sender',
  )
  assertError(await report({ reported_user_id: 'bob', reason: 'x' }), 400, 'validation_error', 'not an id')
  const count = await server.ctx.db
    .selectFrom('reports')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('reporter_id', '=', alice.id)
    .executeTakeFirstOrThrow()
  assert.equal(Number(count.n), 0, 'nothing written')
  assert.equal((await server.api.post(`${V2}/report`, { reported_user_id: bob.id, reason: 'x' })).status, 401)
})

test('a post of a public channel can be reported by a reader who is not subscribed', async () => {
  const [owner, reader] = await users(2)
  const channel = await createChannel(owner, { is_public: true })
  const post = await owner.api.post(`${V2}/messages/send`, { chat_id: channel.channel_id, content: 'a post' })
  assert.equal(post.status, 200, post.text)
  const res = await reader.api.post(`${V2}/report`, { reported_message_id: post.body.data.message_id, reason: 'misleading' })
  assert.equal(res.status, 200, res.text)
})
