/**
 * The admin reports queue, black-box: GET /api/admin/reports (reporter, reported user, the message
 * as it is now; by status, paginated), POST /api/admin/reports/{id}/resolve (resolved or dismissed
 * with a note, once, one ModLog row), and the ModLog's filters. Anonymous 401, non-admin 403.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { ISO, registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'

const server = await startTestServer()
const admin = await server.createAdmin()

async function report(reporter: any, body: Record<string, unknown>) {
  const res = await reporter.api.post(`${V2}/report`, { reason: 'spam', ...body })
  assert.equal(res.status, 200, res.text)
  return res.body.data.report_id as number
}
const queue = async (query: Record<string, string | number> = {}) => {
  const res = await admin.api.get('/api/admin/reports', { query: { per_page: 100, ...query } })
  assert.equal(res.status, 200, res.text)
  return res.body
}

test('the queue: who reported whom, the message as it is now, newest first, by status; admins only', async () => {
  const [reporter, spammer, other] = await registerUsers(server, 3)
  const message = await send(spammer, reporter, 'buy cheap things')
  const gone = await send(spammer, reporter, 'and more')
  const aboutUser = await report(reporter, { reported_user_id: spammer.id, reason: 'impersonation' })
  const aboutMessage = await report(reporter, { reported_message_id: message.message_id })
  const aboutGone = await report(reporter, { reported_message_id: gone.message_id })
  await spammer.api.delete(`${V2}/messages/${gone.message_id}`, { query: { for_all: 'true' } })

  const body = await queue({ status: 'pending' })
  const mine = body.items.filter((item: any) => [aboutUser, aboutMessage, aboutGone].includes(item.report_id))
  assert.deepEqual(
    mine.map((item: any) => item.report_id),
    [aboutGone, aboutMessage, aboutUser],
    'newest first',
  )
  const [goneItem, messageItem, userItem] = mine
  assert.deepEqual(userItem.reporter, { user_id: reporter.id, username: reporter.username })
  assert.deepEqual(userItem.reported_user, { user_id: spammer.id, username: spammer.username, is_active: true })
  assert.deepEqual([userItem.reason, userItem.status, userItem.message, userItem.resolved_at], ['impersonation', 'pending', null, null])
  assert.match(userItem.created_at, ISO)
  assert.deepEqual(
    [messageItem.message.message_id, messageItem.message.chat_id, messageItem.message.content, messageItem.message.deleted_for_all],
    [message.message_id, message.chat_id, 'buy cheap things', false],
  )
  assert.deepEqual(
    [goneItem.message.content, goneItem.message.deleted_for_all],
    [null, true],
    'deleted for everyone: its text is not shown',
  )
  assert.ok(body.total >= 3)

  assert.equal((await server.api.get('/api/admin/reports')).status, 401)
  assertError(await other.api.get('/api/admin/reports'), 403, 'forbidden', 'not an admin')
  assertError(await admin.api.get('/api/admin/reports', { query: { status: 'open' } }), 400, 'validation_error', 'bad status')
  const paged = await queue({ per_page: 1, page: 2 })
  assert.equal(paged.items.length, 1)
})

test('resolve or dismiss, with a note, once; one ModLog row each; refusals change nothing', async () => {
  const [reporter, target, notAdmin] = await registerUsers(server, 3)
  const first = await report(reporter, { reported_user_id: target.id })
  const second = await report(notAdmin, { reported_user_id: target.id, reason: 'rude' })

  assertError(await notAdmin.api.post(`/api/admin/reports/${first}/resolve`, { status: 'resolved' }), 403, 'forbidden', 'not an admin')
  assert.equal((await server.api.post(`/api/admin/reports/${first}/resolve`, { status: 'resolved' })).status, 401)
  assertError(
    await admin.api.post(`/api/admin/reports/${first}/resolve`, { status: 'pending' }),
    400,
    'validation_error',
    'back to pending',
  )
  assertError(await admin.api.post(`/api/admin/reports/${first}/resolve`, {}), 400, 'validation_error', 'no status')
  assertError(
    await admin.api.post(`/api/admin/reports/${first}/resolve`, { status: 'resolved', note: 'n'.repeat(1001) }),
    400,
    'validation_error',
    'long note',
  )
  assertError(await admin.api.post('/api/admin/reports/987654/resolve', { status: 'resolved' }), 404, 'not_found', 'unknown report')
  assert.equal((await queue({ status: 'pending' })).items.filter((i: any) => i.report_id === first).length, 1, 'still pending')

  const resolved = await admin.api.post(`/api/admin/reports/${first}/resolve`, { status: 'resolved', note: '  warned by mail  ' })
  assert.equal(resolved.status, 200, resolved.text)
  assert.deepEqual(
    [resolved.body.data.status, resolved.body.data.note, resolved.body.data.resolved_by],
    ['resolved', 'warned by mail', admin.id],
  )
  assert.match(resolved.body.data.resolved_at, ISO)
  assertError(await admin.api.post(`/api/admin/reports/${first}/resolve`, { status: 'dismissed' }), 409, 'conflict', 'closed once')
  const dismissed = (await admin.api.post(`/api/admin/reports/${second}/resolve`, { status: 'dismissed' })).body.data
  assert.deepEqual([dismissed.status, dismissed.note], ['dismissed', null])

  const pending = (await queue({ status: 'pending' })).items.map((i: any) => i.report_id)
  assert.ok(!pending.includes(first) && !pending.includes(second), 'gone from the pending queue')
  assert.deepEqual((await queue({ status: 'dismissed' })).items.filter((i: any) => i.report_id === second).length, 1)

  // exactly one ModLog row per action, found by its filters
  const log = await admin.api.get('/api/admin/modlog', { query: { target_id: target.id } })
  assert.equal(log.status, 200, log.text)
  assert.deepEqual(
    log.body.items.map((row: any) => [row.action, row.details.report_id]),
    [
      ['report.dismiss', second],
      ['report.resolve', first],
    ],
  )
  assert.equal(log.body.total, 2)
  const byAction = (await admin.api.get('/api/admin/modlog', { query: { action: 'report.resolve', per_page: 100 } })).body.items
  assert.ok(byAction.length >= 1 && byAction.every((row: any) => row.action === 'report.resolve'))
  const byAdmin = (await admin.api.get('/api/admin/modlog', { query: { admin_id: admin.id, per_page: 100 } })).body.items
  assert.ok(byAdmin.every((row: any) => row.admin_id === admin.id) && byAdmin.length >= 2)
  assert.deepEqual(
    (await admin.api.get('/api/admin/modlog', { query: { admin_id: notAdmin.id } })).body.items,
    [],
    'a user who did nothing',
  )
})
