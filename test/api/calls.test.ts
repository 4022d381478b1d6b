/**
 * 1:1 calls, black-box: start/make, answer, end (ended, declined, cancelled), missed after the ring
 * time-out (the call-timeouts job), the busy signal, blocks, the history, and call.incoming /
 * call.answered / call.ended on both parties' devices, logged in their update sequence.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { TestClock } from '../harness/clock.js'
import { ISO, registerUsers, updates, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { assertDelivered, assertNone, TestSocket } from '../harness/socket.js'
import { waitFor } from '../harness/wait.js'

const clock = new TestClock()
const server = await startTestServer({ clock, env: { CALL_RING_TIMEOUT_SECONDS: '5' } })

const call = async (from: TestUser, to: TestUser, body: Record<string, unknown> = {}, path = 'start') => {
  const res = await from.api.post(`${V2}/calls/${path}`, { receiver_id: to.id, ...body })
  assert.equal(res.status, 200, res.text)
  return res.body.data
}
const act = (user: TestUser, id: number, what: 'answer' | 'end') => user.api.post(`${V2}/calls/${id}/${what}`)
const historyOf = async (user: TestUser) => {
  const res = await user.api.get(`${V2}/calls/history`)
  assert.equal(res.status, 200, res.text)
  return res.body.items as any[]
}

test('a call rings, is answered and ends: both parties see every step, on every device; the history has it', async () => {
  const [ann, bob] = await registerUsers(server, 2)
  const annPhone = await TestSocket.connect(server.url, ann.token)
  const bobPhone = await TestSocket.connect(server.url, bob.token)
  const bobLaptop = await TestSocket.connect(server.url, bob.token)

  const started = await call(ann, bob, { call_type: 'video' })
  assert.deepEqual([started.caller_id, started.receiver_id, started.status, started.call_type], [ann.id, bob.id, 'ringing', 'video'])
  assert.equal(started.caller.username, ann.username)
  for (const socket of [annPhone, bobPhone, bobLaptop])
    assert.equal((await socket.next('call.incoming')).data.call.call_id, started.call_id)

  assertError(await act(ann, started.call_id, 'answer'), 403, 'forbidden', 'the caller does not answer')
  const answered = await act(bob, started.call_id, 'answer')
  assert.equal(answered.status, 200, answered.text)
  assert.equal(answered.body.data.status, 'answered')
  assert.match(answered.body.data.answered_at, ISO)
  // the laptop stops ringing: it hears the answer given on the phone
  for (const socket of [annPhone, bobPhone, bobLaptop]) assert.equal((await socket.next('call.answered')).data.call.status, 'answered')
  assertError(await act(bob, started.call_id, 'answer'), 409, 'conflict', 'answered twice')

  clock.advance(42_000)
  const ended = await act(ann, started.call_id, 'end')
  assert.equal(ended.status, 200, ended.text)
  assert.deepEqual([ended.body.data.status, ended.body.data.duration_seconds], ['ended', 42])
  for (const socket of [annPhone, bobPhone, bobLaptop]) assert.equal((await socket.next('call.ended')).data.call.duration_seconds, 42)
  assertError(await act(bob, started.call_id, 'end'), 409, 'conflict', 'ended twice')

  const [annItem] = await historyOf(ann)
  assert.deepEqual(
    [
      annItem.call_id,
      annItem.direction,
      annItem.status,
      annItem.duration_seconds,
      annItem.call_type,
      annItem.peer.user_id,
      annItem.peer.username,
    ],
    [started.call_id, 'outgoing', 'ended', 42, 'video', bob.id, bob.username],
  )
  assert.match(annItem.ended_at, ISO)
  const [bobItem] = await historyOf(bob)
  assert.deepEqual([bobItem.direction, bobItem.peer.user_id], ['incoming', ann.id])
  // logged in the update sequence: a device that was away replays them
  const names = (await updates(bob)).items.map((u: any) => u.type).filter((t: string) => t.startsWith('call.'))
  assert.deepEqual(names, ['call.incoming', 'call.answered', 'call.ended'])
})

test('never answered: the callee declines, the caller cancels, nobody answers in time (missed)', async () => {
  const [ann, bob] = await registerUsers(server, 2)
  const declined = await call(ann, bob)
  assert.equal((await act(bob, declined.call_id, 'end')).body.data.status, 'declined')
  const cancelled = await call(ann, bob, {}, 'make')
  assert.equal((await act(ann, cancelled.call_id, 'end')).body.data.status, 'cancelled')
  assert.equal((await act(ann, cancelled.call_id, 'end')).status, 409)

  const socket = await TestSocket.connect(server.url, bob.token)
  const unanswered = await call(ann, bob)
  await socket.next('call.incoming')
  // positive control: before the time-out the job leaves it ringing
  await assertNone(socket, 'call.ended', 1500, 'no call.ended before the time-out')
  assert.equal((await bob.api.get(`${V2}/calls/${unanswered.call_id}`)).body.data.status, 'ringing')
  const [ended] = await assertDelivered(socket, 'call.ended', async () => clock.advance(6000), 5000)
  assert.deepEqual([ended.data.call.call_id, ended.data.call.status, ended.data.call.duration_seconds], [unanswered.call_id, 'missed', 0])
  assertError(await act(bob, unanswered.call_id, 'answer'), 409, 'conflict', 'too late')
  const statuses = (await historyOf(bob)).map((c) => c.status)
  assert.deepEqual(statuses, ['missed', 'cancelled', 'declined'])
})

test('busy: nobody can call someone in a call, nor call while in one; free again once it ends', async () => {
  const [ann, bob, cid, dan] = await registerUsers(server, 4)
  const first = await call(ann, bob)
  assertError(await cid.api.post(`${V2}/calls/start`, { receiver_id: bob.id }), 409, 'conflict', 'the callee is busy')
  assertError(await cid.api.post(`${V2}/calls/start`, { receiver_id: ann.id }), 409, 'conflict', 'the caller is busy')
  assertError(await ann.api.post(`${V2}/calls/start`, { receiver_id: dan.id }), 409, 'conflict', 'already calling')
  assertError(await bob.api.post(`${V2}/calls/start`, { receiver_id: dan.id }), 409, 'conflict', 'already being called')
  assert.equal((await act(bob, first.call_id, 'end')).status, 200)
  assert.equal((await call(cid, bob)).status, 'ringing', 'free again')
})

test("refusals: blocked, yourself, unknown or banned users, bad bodies, other people's calls, anonymous", async () => {
  const [ann, bob, eve] = await registerUsers(server, 3)
  assert.equal((await bob.api.post(`${V2}/block`, { user_id: ann.id })).status, 200)
  assertError(await ann.api.post(`${V2}/calls/start`, { receiver_id: bob.id }), 403, 'blocked')
  assert.equal((await call(bob, ann)).status, 'ringing', 'the blocker may still call (positive control)')
  assertError(await eve.api.post(`${V2}/calls/start`, { receiver_id: eve.id }), 400, 'validation_error', 'yourself')
  assertError(await eve.api.post(`${V2}/calls/start`, { receiver_id: 987654 }), 404, 'not_found')
  assertError(await eve.api.post(`${V2}/calls/start`, {}), 400, 'validation_error')
  assertError(await eve.api.post(`${V2}/calls/start`, { receiver_id: ann.id, call_type: 'hologram' }), 400, 'validation_error')
  assertError(await eve.api.post(`${V2}/calls/start`, { receiver_id: 'x' }), 400, 'validation_error')
  const [live] = await historyOf(bob)
  assertError(await act(eve, live.call_id, 'answer'), 404, 'not_found', "someone else's call")
  assertError(await act(eve, live.call_id, 'end'), 404, 'not_found', "someone else's call")
  assertError(await eve.api.get(`${V2}/calls/${live.call_id}`), 404, 'not_found')
  assertError(await act(eve, 987654, 'end'), 404, 'not_found')
  assert.equal((await server.api.post(`${V2}/calls/start`, { receiver_id: ann.id })).status, 401)
  assert.equal((await server.api.get(`${V2}/calls/history`)).status, 401)
  assert.equal((await bob.api.get(`${V2}/calls/${live.call_id}`)).body.data.status, 'ringing', 'nothing changed')
  await waitFor(async () => ((await historyOf(ann)).length === 1 ? true : undefined))
})

test('history: paginated, newest first, only my calls', async () => {
  const [ann, bob, cid] = await registerUsers(server, 3)
  for (let i = 0; i < 3; i++) await act(ann, (await call(ann, bob)).call_id, 'end')
  await act(cid, (await call(cid, bob)).call_id, 'end')
  const page = await ann.api.get(`${V2}/calls/history`, { query: { page: 2, per_page: 2 } })
  assert.equal(page.status, 200)
  assert.equal(page.body.items.length, 1)
  assert.equal(page.body.total, 3, "ann's three calls, not cid's")
  const all = await historyOf(bob)
  assert.equal(all.length, 4)
  assert.ok(all[0].call_id > all[1].call_id, 'newest first')
})
