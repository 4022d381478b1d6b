/**
 * The admin area beyond the basics, black-box: users filtered and in detail, the last-admin rule,
 * report actions (ban_user, delete_message, warn_user), broadcasts delivered by the job runner,
 * statistics from counters, the read-only status. Every endpoint: anonymous 401, non-admin 403,
 * admin 2xx, and its one ModLog row.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { bytesOf, upload } from '../harness/files.js'
import { history, ISO, registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'
import { waitFor } from '../harness/wait.js'

const server = await startTestServer()
const admin = await server.createAdmin()
const A = '/api/admin'

async function report(reporter: TestUser, body: Record<string, unknown>) {
  const res = await reporter.api.post(`${V2}/report`, { reason: 'spam', ...body })
  assert.equal(res.status, 200, res.text)
  return res.body.data.report_id as number
}

async function modlog(query: Record<string, string | number>) {
  const res = await admin.api.get(`${A}/modlog`, { query: { per_page: 100, ...query } })
  assert.equal(res.status, 200, res.text)
  return res.body.items as any[]
}

const detail = async (id: number) => {
  const res = await admin.api.get(`${A}/users/${id}`)
  assert.equal(res.status, 200, res.text)
  return res.body.data
}

test('every new admin endpoint: anonymous 401, a non-admin 403', async () => {
  const [user] = await registerUsers(server, 1)
  const calls: [string, string, unknown?][] = [
    ['GET', `${A}/users/${user.id}`],
    ['POST', `${A}/reports/1/action`, { action: 'warn_user' }],
    ['POST', `${A}/broadcast`, { content: 'hello' }],
    ['GET', `${A}/broadcasts`],
    ['GET', `${A}/broadcasts/1`],
    ['GET', `${A}/stats`],
    ['GET', `${A}/status`],
  ]
  for (const [method, path, body] of calls) {
    assertError(await server.api.request(method, path, body), 401, 'unauthorized', `${method} ${path} anonymous`)
    assertError(await user.api.request(method, path, body), 403, 'forbidden', `${method} ${path} as a user`)
  }
  // positive control: the same admin call answers
  assert.equal((await admin.api.get(`${A}/users/${user.id}`)).status, 200)
  assert.equal((await admin.api.get(`${A}/broadcasts`)).status, 200)
})

test('users: filters by active, admin and premium; one user in detail; unknown 404', async () => {
  const [plain, banned, premium, promoted] = await registerUsers(server, 4)
  assert.equal((await admin.api.post(`${A}/users/${banned.id}/ban`, { reason: 'spam' })).status, 200)
  assert.equal((await premium.api.post('/premium/activate', { plan: 'monthly' })).status, 200)
  assert.equal((await admin.api.post(`${A}/users/${promoted.id}/role`, { is_admin: true })).status, 200)

  const ids = async (query: Record<string, string | number | boolean>) => {
    const res = await admin.api.get(`${A}/users`, { query: { per_page: 100, ...query } })
    assert.equal(res.status, 200, res.text)
    return new Set<number>(res.body.items.map((u: any) => u.user_id))
  }
  const inactive = await ids({ is_active: false })
  assert.ok(inactive.has(banned.id) && !inactive.has(plain.id))
  const active = await ids({ is_active: true })
  assert.ok(active.has(plain.id) && !active.has(banned.id))
  const admins = await ids({ is_admin: true })
  assert.ok(admins.has(promoted.id) && admins.has(admin.id) && !admins.has(plain.id))
  const premiums = await ids({ is_premium: true })
  assert.ok(premiums.has(premium.id) && !premiums.has(plain.id))
  const notPremium = await ids({ is_premium: false })
  assert.ok(notPremium.has(plain.id) && !notPremium.has(premium.id))
  const both = await ids({ is_premium: true, q: premium.username })
  assert.deepEqual([...both], [premium.id])
  assertError(await admin.api.get(`${A}/users`, { query: { is_active: 'maybe' } }), 400, 'validation_error', 'not a boolean')

  await report(plain, { reported_user_id: premium.id })
  const d = await detail(premium.id)
  assert.equal(d.user_id, premium.id)
  assert.equal(d.sessions_count, 1)
  assert.deepEqual(d.reports, { total: 1, pending: 1 })
  assert.equal(d.premium.is_premium, true)
  assert.match(d.premium.expires_at, ISO)
  assert.deepEqual([d.warnings, d.is_system, d.two_factor_enabled, d.is_active], [0, false, false, true])
  assert.equal((await detail(banned.id)).sessions_count, 0, 'a ban ended the sessions')
  assertError(await admin.api.get(`${A}/users/987654`), 404, 'not_found')
})

test('role: self-demotion 409; two admins demoting each other at once leave one admin', async () => {
  const [first, second] = await registerUsers(server, 2)
  for (const user of [first, second]) assert.equal((await admin.api.post(`${A}/users/${user.id}/role`, { is_admin: true })).status, 200)
  assertError(await first.api.post(`${A}/users/${first.id}/role`, { is_admin: false }), 409, 'conflict', 'self-demotion')
  assertError(await first.api.post(`${A}/users/${first.id}/ban`, {}), 409, 'conflict', 'self-ban')
  assert.equal((await detail(first.id)).is_admin, true, 'nothing changed')
  // the main admin steps aside so these two are the only active admins
  assert.equal((await first.api.post(`${A}/users/${admin.id}/role`, { is_admin: false })).status, 200)
  const others = (await first.api.get(`${A}/users`, { query: { is_admin: true, is_active: true, per_page: 100 } })).body.items.map(
    (u: any) => u.user_id,
  )
  for (const id of others)
    if (id !== first.id && id !== second.id) assert.equal((await first.api.post(`${A}/users/${id}/role`, { is_admin: false })).status, 200)

  const [a, b] = await Promise.all([
    first.api.post(`${A}/users/${second.id}/role`, { is_admin: false }),
    second.api.post(`${A}/users/${first.id}/role`, { is_admin: false }),
  ])
  const statuses = [a.status, b.status].sort()
  assert.equal(statuses[0], 200, `one demotion wins: ${a.text} ${b.text}`)
  assert.ok([403, 409].includes(statuses[1]), `the other is refused: ${a.text} ${b.text}`)
  const survivor = a.status === 200 ? first : second
  const left = (await survivor.api.get(`${A}/users`, { query: { is_admin: true, is_active: true } })).body.items.map((u: any) => u.user_id)
  assert.deepEqual(left, [survivor.id], 'exactly one admin is left')
  // give the main admin the role back for the rest of the file
  assert.equal((await survivor.api.post(`${A}/users/${admin.id}/role`, { is_admin: true })).status, 200)
})

test('report action ban_user: the user is banned, their socket closes, their token 401; the report resolves; one ModLog row', async () => {
  const [reporter, spammer] = await registerUsers(server, 2)
  const socket = await TestSocket.connect(server.url, spammer.token)
  const id = await report(reporter, { reported_user_id: spammer.id })
  assertError(await admin.api.post(`${A}/reports/${id}/action`, { action: 'mute_user' }), 400, 'validation_error', 'unknown action')
  assertError(await admin.api.post(`${A}/reports/987654/action`, { action: 'ban_user' }), 404, 'not_found')
  assertError(
    await admin.api.post(`${A}/reports/${id}/action`, { action: 'delete_message' }),
    400,
    'validation_error',
    'a user report has no message',
  )
  assert.equal((await spammer.api.get(`${V2}/auth/me`)).status, 200, 'still signed in after the refusals')

  const res = await admin.api.post(`${A}/reports/${id}/action`, { action: 'ban_user', note: 'repeated spam' })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual([res.body.data.status, res.body.data.note, res.body.data.reported_user.is_active], ['resolved', 'repeated spam', false])
  assert.equal((await socket.closing()).code, 4003)
  assertError(await spammer.api.get(`${V2}/auth/me`), 401, 'unauthorized')
  assertError(await admin.api.post(`${A}/reports/${id}/action`, { action: 'ban_user' }), 409, 'conflict', 'acted on once')
  const rows = await modlog({ target_id: spammer.id })
  assert.deepEqual(
    rows.map((r) => r.action),
    ['report.ban_user'],
  )
  assert.deepEqual(rows[0].details, { report_id: id, note: 'repeated spam' })
})

test('report action delete_message: deleted for everyone with message.deleted to the chat; the report resolves', async () => {
  const [reporter, sender] = await registerUsers(server, 2)
  const message = await send(sender, reporter, 'something nasty')
  const kept = await send(sender, reporter, 'something fine')
  const socket = await TestSocket.connect(server.url, reporter.token)
  const id = await report(reporter, { reported_message_id: message.message_id })
  const res = await admin.api.post(`${A}/reports/${id}/action`, { action: 'delete_message' })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual([res.body.data.status, res.body.data.message.deleted_for_all, res.body.data.message.content], ['resolved', true, null])
  const event = await socket.next('message.deleted')
  assert.deepEqual(event.data, { chat_id: message.chat_id, message_id: message.message_id, deleted_for_all: true })
  const items = await history(reporter, message.chat_id)
  const ids = items.map((m: any) => m.message_id)
  assert.ok(!ids.includes(message.message_id) && ids.includes(kept.message_id), 'gone from history; the other message stays')
  const rows = await modlog({ action: 'report.delete_message' })
  assert.deepEqual(
    rows.filter((r) => r.details.report_id === id).map((r) => [r.target_id, r.details.message_id]),
    [[sender.id, message.message_id]],
  )

  // a second report of the same message, now deleted: 409, nothing more logged
  const other = await report(sender, { reported_message_id: kept.message_id })
  assert.equal((await admin.api.post(`${A}/reports/${other}/action`, { action: 'delete_message' })).status, 200, 'positive control')
  const third = await report(reporter, { reported_user_id: sender.id })
  assertError(await admin.api.post(`${A}/reports/${third}/action`, { action: 'delete_message' }), 400, 'validation_error')
})

test('report action warn_user: a message from the system account tern, the warning counted', async () => {
  const [reporter, rude] = await registerUsers(server, 2)
  const socket = await TestSocket.connect(server.url, rude.token)
  const id = await report(reporter, { reported_user_id: rude.id, reason: 'insults' })
  const res = await admin.api.post(`${A}/reports/${id}/action`, { action: 'warn_user', note: 'Keep it civil.' })
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.data.status, 'resolved')
  const frame = await socket.next('message.new')
  const warning = frame.data.message
  assert.equal(warning.sender_username, 'tern')
  assert.match(warning.content, /insults/)
  assert.match(warning.content, /Keep it civil\./)
  const profile = (await rude.api.get(`${V2}/profile/tern`)).body.data
  assert.deepEqual([profile.username, profile.is_bot], ['tern', true])
  assert.equal((await detail(rude.id)).warnings, 1)
  const second = await report(reporter, { reported_user_id: rude.id, reason: 'again' })
  assert.equal((await admin.api.post(`${A}/reports/${second}/action`, { action: 'warn_user' })).status, 200)
  assert.equal((await detail(rude.id)).warnings, 2)
  assert.deepEqual(
    (await modlog({ target_id: rude.id })).map((r) => r.action),
    ['report.warn_user', 'report.warn_user'],
  )
  // nobody can register the system account's name
  assertError(await server.api.post(`${V2}/auth/register`, { username: 'tern', password: 'long enough pass' }), 409, 'conflict')
  assertError(await admin.api.post(`${A}/users/${warning.sender_id}/ban`, {}), 409, 'conflict', 'the system account is not moderated')
})

test('broadcast: answers at once, the job delivers to every active user, progress reaches total; empty 400', async () => {
  const [online, offline, banned] = await registerUsers(server, 3)
  assert.equal((await admin.api.post(`${A}/users/${banned.id}/ban`, {})).status, 200)
  const socket = await TestSocket.connect(server.url, online.token)
  assertError(await admin.api.post(`${A}/broadcast`, { content: '   ' }), 400, 'validation_error', 'blank')
  assertError(await admin.api.post(`${A}/broadcast`, {}), 400, 'validation_error', 'missing')
  assertError(await admin.api.get(`${A}/broadcasts/987654`), 404, 'not_found')

  const active = (await admin.api.get(`${A}/users`, { query: { is_active: true, per_page: 1 } })).body.total
  const started = await admin.api.post(`${A}/broadcast`, { content: 'Tern 2.0 is here' })
  assert.equal(started.status, 202, started.text)
  const { broadcast_id: id, recipients } = started.body.data
  // every active user except the system account itself
  assert.equal(recipients, active - 1)
  const frame = await socket.next('message.new', 5000)
  assert.equal(frame.data.message.content, 'Tern 2.0 is here')
  assert.equal(frame.data.message.sender_username, 'tern')
  const done = await waitFor(
    async () => {
      const b = (await admin.api.get(`${A}/broadcasts/${id}`)).body.data
      return b.status === 'done' ? b : undefined
    },
    { timeoutMs: 10_000, message: 'the broadcast to finish' },
  )
  assert.deepEqual([done.sent, done.total], [recipients, recipients])
  assert.match(done.finished_at, ISO)

  const chatWithTern = async (user: TestUser) => {
    const chats = (await user.api.get(`${V2}/chat_list`, { query: { per_page: 100 } })).body.items
    return chats.find((c: any) => c.peer?.username === 'tern')
  }
  const offlineChat = await chatWithTern(offline)
  assert.ok(offlineChat, 'the offline user has the chat with tern')
  const items = await history(offline, offlineChat.chat_id)
  assert.ok(items.some((m: any) => m.content === 'Tern 2.0 is here'))
  // a banned user gets nothing: lifted afterwards, their chat list has no chat with tern
  assert.equal((await admin.api.post(`${A}/users/${banned.id}/unban`)).status, 200)
  const login = await server.api.post(`${V2}/auth/login`, { login: banned.username, password: banned.password })
  assert.equal(login.status, 200, login.text)
  const unbanned = { ...banned, api: server.api.as(login.body.data.session_token) }
  assert.equal(await chatWithTern(unbanned), undefined, 'a banned user gets nothing')
  const rows = (await modlog({ action: 'broadcast.start' })).filter((r) => r.details.broadcast_id === id)
  assert.deepEqual(
    rows.map((r) => r.details.recipients),
    [recipients],
  )
  const listed = (await admin.api.get(`${A}/broadcasts`)).body.items
  assert.equal(listed[0].broadcast_id, id)
})

test('stats: counters move with registrations, messages, uploads, premium and activity', async () => {
  const get = async () => {
    const res = await admin.api.get(`${A}/stats`)
    assert.equal(res.status, 200, res.text)
    return res.body.data
  }
  const before = await get()
  assert.equal(before.messages_per_day.length, 30)
  assert.equal(before.active_users_per_day.length, 30)
  const today = new Date().toISOString().slice(0, 10)
  assert.equal(before.messages_per_day.at(-1).day, today)
  const [a, b] = await registerUsers(server, 2)
  await send(a, b, 'one')
  await send(b, a, 'two')
  await send(a, b, 'three')
  await upload(server, a, bytesOf(5000, `stats-${Date.now()}`))
  assert.equal((await b.api.post('/premium/activate', { plan: 'monthly' })).status, 200)
  const after = await get()
  assert.equal(after.users, before.users + 2)
  assert.equal(after.messages_per_day.at(-1).count, before.messages_per_day.at(-1).count + 3)
  assert.equal(after.messages, before.messages + 3)
  assert.equal(after.files_bytes, before.files_bytes + 5000)
  assert.equal(after.premium_users, before.premium_users + 1)
  assert.equal(after.active_users_per_day.at(-1).count, before.active_users_per_day.at(-1).count + 2, 'each new user is active today once')
  // a second session of the same user today is not counted again
  await server.api.post(`${V2}/auth/login`, { login: a.username, password: a.password })
  assert.equal((await get()).active_users_per_day.at(-1).count, after.active_users_per_day.at(-1).count)
})

test('status: version, uptime, database health, the jobs and the queues; read-only', async () => {
  const res = await admin.api.get(`${A}/status`)
  assert.equal(res.status, 200, res.text)
  const s = res.body.data
  assert.equal(s.version, '0.1.0')
  assert.ok(s.uptime_seconds >= 0)
  assert.equal(s.database.status, 'ok')
  assert.equal(s.redis.status, process.env.TEST_REDIS_URL ? 'ok' : 'off')
  await waitFor(
    async () => {
      const jobs = (await admin.api.get(`${A}/status`)).body.data.jobs.map((j: any) => j.name)
      return jobs.includes('broadcast-delivery') ? true : undefined
    },
    { timeoutMs: 10_000, message: 'the job records' },
  )
  assert.ok(Number.isInteger(s.queues.pending_reports))
  assertError(await admin.api.post(`${A}/status`, {}), 405, 'method_not_allowed', 'nothing to run')
})
