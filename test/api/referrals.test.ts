/**
 * Referrals, black-box: the invite link, saying who invited me once, refusals, the premium reward
 * at exactly 10, and what keeps it from being farmed (accounts older than the link, the window,
 * the monthly cap).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { TestClock } from '../harness/clock.js'
import { registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'

const server = await startTestServer()

/** An inviter who has had their link (GET referrals/me): accounts created after this may name them. */
async function sharing(s: TestServer = server) {
  const [inviter] = await registerUsers(s, 1)
  assert.equal((await inviter.api.get(`${V2}/referrals/me`)).status, 200)
  return inviter
}
const DAY = 86_400_000

const me = async (user: TestUser) => (await user.api.get(`${V2}/auth/me`)).body.data
const orders = (user: TestUser) =>
  server.ctx.db.selectFrom('premium_orders').selectAll().where('user_id', '=', user.id).orderBy('id').execute()

test('GET referrals/me: the invite link, the count and the threshold', async () => {
  const [alice] = await registerUsers(server, 1)
  const res = await alice.api.get(`${V2}/referrals/me`)
  const [bob] = await registerUsers(server, 1)
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.data, {
    invite_url: `${server.ctx.config.publicBaseUrl}/join?ref=${alice.username}`,
    invited_count: 0,
    threshold: 10,
  })
  const invited = await bob.api.post(`${V2}/referrals/invite`, { ref: alice.username.toUpperCase() })
  assert.equal(invited.status, 200, invited.text)
  assert.deepEqual(invited.body.data, { inviter_id: alice.id })
  assert.equal((await alice.api.get(`${V2}/referrals/me`)).body.data.invited_count, 1)
})

test('invite refusals: twice (409), myself, unknown, neither or both fields; nothing counted', async () => {
  const [alice, carol] = [await sharing(), await sharing()]
  const [bob] = await registerUsers(server, 1)
  assertError(await bob.api.post(`${V2}/referrals/invite`, { ref: bob.username }), 400, 'validation_error', 'myself')
  assertError(await bob.api.post(`${V2}/referrals/invite`, { user_id: bob.id }), 400, 'validation_error', 'myself by id')
  assertError(await bob.api.post(`${V2}/referrals/invite`, { ref: 'nobody_at_all_here' }), 404, 'not_found', 'unknown ref')
  assertError(await bob.api.post(`${V2}/referrals/invite`, { user_id: 987_654_321 }), 404, 'not_found', 'unknown id')
  assertError(await bob.api.post(`${V2}/referrals/invite`, {}), 400, 'validation_error', 'neither')
  assertError(await bob.api.post(`${V2}/referrals/invite`, { ref: alice.username, user_id: alice.id }), 400, 'validation_error', 'both')
  assert.equal((await alice.api.get(`${V2}/referrals/me`)).body.data.invited_count, 0, 'nothing counted')
  assert.equal((await bob.api.post(`${V2}/referrals/invite`, { user_id: alice.id })).status, 200, 'by id (control)')
  assertError(await bob.api.post(`${V2}/referrals/invite`, { ref: carol.username }), 409, 'conflict', 'a second inviter')
  assertError(await bob.api.post(`${V2}/referrals/invite`, { user_id: alice.id }), 409, 'conflict', 'the same again')
  assert.equal((await alice.api.get(`${V2}/referrals/me`)).body.data.invited_count, 1)
  assert.equal((await carol.api.get(`${V2}/referrals/me`)).body.data.invited_count, 0)
})

test('every 10 invited users grant the inviter 30 days of premium, with a referral order: not at 9, at exactly 10, again at 20', async () => {
  const inviter = await sharing()
  const invited = await registerUsers(server, 20)
  for (const user of invited.slice(0, 9))
    assert.equal((await user.api.post(`${V2}/referrals/invite`, { ref: inviter.username })).status, 200)
  assert.equal((await me(inviter)).is_premium, false, 'not at 9')
  assert.deepEqual(await orders(inviter), [])

  const before = Date.now()
  assert.equal((await invited[9].api.post(`${V2}/referrals/invite`, { ref: inviter.username })).status, 200)
  assert.equal((await me(inviter)).is_premium, true, 'premium at exactly 10')
  const [first] = await orders(inviter)
  assert.deepEqual([first.plan, first.amount, first.currency, first.status, first.provider], ['referral', 0, 'RUB', 'paid', 'referral'])
  assert.ok(Math.abs(Number(first.premium_until) - (before + 30 * DAY)) < 60_000, '30 days from now')

  for (const user of invited.slice(10, 20)) await user.api.post(`${V2}/referrals/invite`, { ref: inviter.username })
  const all = await orders(inviter)
  assert.equal(all.length, 2, 'a second reward at 20')
  assert.equal(Number(all[1].premium_until) - Number(first.premium_until), 30 * DAY, 'added to the running premium')
  assert.equal((await inviter.api.get(`${V2}/referrals/me`)).body.data.invited_count, 20)
})

test('no farming: an account older than the link, a link never shared, a late claim — refused, nothing counted; each beside a counted one', async () => {
  const clock = new TestClock()
  const farm = await startTestServer({ clock, env: { REFERRAL_WINDOW_DAYS: '7' } })
  const [older] = await registerUsers(farm, 1)
  const [silent] = await registerUsers(farm, 1)
  clock.advance(1000)
  const inviter = await sharing(farm)
  clock.advance(1000)
  const [newcomer, late] = await registerUsers(farm, 2)
  // an account created before the inviter had their link cannot name them (older accounts, sock puppets made earlier)
  assertError(await older.api.post(`${V2}/referrals/invite`, { ref: inviter.username }), 403, 'forbidden', 'older than the link')
  // a user who never had their link is named by nobody
  assertError(await newcomer.api.post(`${V2}/referrals/invite`, { user_id: silent.id }), 403, 'forbidden', 'never shared')
  // eight days after joining is too late
  clock.advance(8 * DAY)
  assertError(await late.api.post(`${V2}/referrals/invite`, { ref: inviter.username }), 403, 'forbidden', 'after the window')
  assert.equal((await inviter.api.get(`${V2}/referrals/me`)).body.data.invited_count, 0, 'nothing counted')
  // positive control: an account created after the link, within its window
  const [fresh] = await registerUsers(farm, 1)
  clock.advance(6 * DAY)
  assert.equal((await fresh.api.post(`${V2}/referrals/invite`, { ref: inviter.username })).status, 200)
  assert.equal((await inviter.api.get(`${V2}/referrals/me`)).body.data.invited_count, 1)
  await farm.close()
})

test('an inviter counts at most REFERRAL_MONTHLY_CAP referrals in 30 days, also when they arrive at once', async () => {
  const clock = new TestClock()
  const capped = await startTestServer({ clock, env: { REFERRAL_MONTHLY_CAP: '3' } })
  const inviter = await sharing(capped)
  clock.advance(1000)
  const invited = await registerUsers(capped, 6)
  const answers = await Promise.all(invited.slice(0, 5).map((user) => user.api.post(`${V2}/referrals/invite`, { ref: inviter.username })))
  assert.deepEqual(answers.map((res) => res.status).sort(), [200, 200, 200, 409, 409])
  assert.equal((await inviter.api.get(`${V2}/referrals/me`)).body.data.invited_count, 3)
  // 30 days on, the cap has room again (for an account within its window)
  clock.advance(31 * DAY)
  const [later] = await registerUsers(capped, 1)
  assert.equal((await later.api.post(`${V2}/referrals/invite`, { ref: inviter.username })).status, 200)
  // (the inviter's own session has lapsed by now: counted in the table)
  const rows = await capped.ctx.db.selectFrom('referrals').select('id').where('inviter_id', '=', inviter.id).execute()
  assert.equal(rows.length, 4)
  await capped.close()
})
