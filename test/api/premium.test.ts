/**
 * Premium, black-box: plans, activation through the test provider (and a declined card), the
 * Idempotency-Key, status and cancel, promo codes (admin CRUD with ModLog, every refusal, discounts,
 * and 50 concurrent redemptions of a 10-use code), the manual provider's pending → paid path, and
 * expiry and renewal by the job under a test clock.
 */
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { TestClock } from '../harness/clock.js'
import { ISO, registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { waitFor } from '../harness/wait.js'

const server = await startTestServer()
const admin = await server.createAdmin()

async function activate(user: TestUser, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await user.api.post('/premium/activate', body, { headers })
  assert.equal(res.status, 200, res.text)
  return res.body.data
}
const status = async (user: TestUser, at = '/premium') => {
  const res = await user.api.get(`${at}/status`)
  assert.equal(res.status, 200, res.text)
  return res.body.data
}
const orders = async (user: TestUser) => (await user.api.get('/premium/orders')).body.items as any[]
async function createPromo(body: Record<string, unknown>, by: TestUser = admin) {
  const res = await by.api.post('/api/admin/promos', body)
  assert.equal(res.status, 200, res.text)
  return res.body.data
}
let promoSeq = 0
const code = (prefix = 'CODE') => `${prefix}${++promoSeq}${Date.now() % 100000}`
/** The same calendar-month arithmetic the server uses, for checking expiries. */
function addMonths(ms: number, months: number) {
  const d = new Date(ms)
  const day = d.getUTCDate()
  d.setUTCDate(1)
  d.setUTCMonth(d.getUTCMonth() + months)
  d.setUTCDate(Math.min(day, new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate()))
  return d.getTime()
}

test('plans: public, from configuration, prices in RUB', async () => {
  const res = await server.api.get('/premium/plans')
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(
    res.body.items.map((p: any) => [p.id, p.months, p.price_rub]),
    [
      ['monthly', 1, 300],
      ['yearly', 12, 2990],
    ],
  )
  for (const plan of res.body.items) assert.equal(typeof plan.title, 'string')
})

test('activate with the test provider: a paid order, premium until a month from now; again extends from the expiry, not from now', async () => {
  const [me] = await registerUsers(server, 1)
  const before = Date.now()
  const first = await activate(me, { plan: 'monthly' })
  assert.equal(first.is_premium, true)
  assert.equal(first.order.status, 'paid')
  assert.deepEqual(
    [first.order.amount, first.order.amount_rub, first.order.currency, first.order.provider, first.order.payment_method],
    [300_00, 300, 'RUB', 'test', 'card'],
  )
  const expiry = Date.parse(first.premium_expires_at)
  assert.ok(expiry >= addMonths(before, 1) && expiry <= addMonths(Date.now(), 1), 'a calendar month from now')
  const st = await status(me)
  assert.deepEqual([st.is_premium, st.plan, st.auto_renew, st.payment_method], [true, 'monthly', true, 'card'])
  assert.match(st.premium_since, ISO)
  assert.deepEqual(await status(me, `${V2}/premium`), st, 'V2/premium/status is the same')
  assert.equal((await me.api.get(`${V2}/auth/me`)).body.data.is_premium, true, 'on my Peer')

  const second = (await me.api.post(`${V2}/premium/activate`, { plan: 'yearly' })).body.data
  assert.equal(Date.parse(second.premium_expires_at), addMonths(expiry, 12), 'extended from the running expiry')
  assert.equal((await status(me)).premium_since, st.premium_since, 'premium since the first purchase')
  assert.deepEqual(
    (await orders(me)).map((o) => [o.plan, o.status, o.premium_until]),
    [
      ['yearly', 'paid', second.premium_expires_at],
      ['monthly', 'paid', first.premium_expires_at],
    ],
  )
})

test('bad input: unknown plan, a method the provider does not take, a declined card, a malformed code; no premium, no paid order', async () => {
  const [me] = await registerUsers(server, 1)
  assertError(await me.api.post('/premium/activate', { plan: 'lifetime' }), 400, 'validation_error', 'unknown plan')
  assertError(await me.api.post('/premium/activate', { plan: '__proto__' }), 400, 'validation_error', 'prototype plan')
  assertError(
    await me.api.post('/premium/activate', { plan: 'monthly', payment_method: 'bank_transfer' }),
    400,
    'validation_error',
    'not a test-provider method',
  )
  assertError(await me.api.post('/premium/activate', { plan: 'monthly', promo_code: 'x' }), 400, 'validation_error', 'malformed code')
  assertError(await me.api.post('/premium/activate', {}), 400, 'validation_error', 'no plan')
  assertError(await me.api.post('/premium/redeem', { code: 'bad code!' }), 400, 'validation_error', 'malformed redeem code')
  assert.deepEqual(await orders(me), [], 'no order for a refused request')
  const declined = await activate(me, { plan: 'monthly', payment_method: 'declined_card' })
  assert.deepEqual([declined.is_premium, declined.order.status, declined.premium_expires_at], [false, 'failed', null])
  assert.equal((await status(me)).is_premium, false)
  assert.equal((await server.api.post('/premium/activate', { plan: 'monthly' })).status, 401)
  assert.equal((await server.api.get('/premium/status')).status, 401)
})

test('Idempotency-Key: a retried activation is the first order, also when both arrive at once', async () => {
  const [me] = await registerUsers(server, 1)
  const a = await activate(me, { plan: 'monthly' }, { 'idempotency-key': 'buy-1' })
  const b = await activate(me, { plan: 'monthly' }, { 'idempotency-key': 'buy-1' })
  assert.equal(b.order_id, a.order_id)
  assert.equal(b.premium_expires_at, a.premium_expires_at, 'not extended twice')
  const racing = await Promise.all(
    Array.from({ length: 8 }, () => me.api.post('/premium/activate', { plan: 'yearly' }, { headers: { 'idempotency-key': 'buy-2' } })),
  )
  assert.ok(
    racing.every((res) => res.status === 200),
    racing.map((r) => r.text).join('\n'),
  )
  assert.equal(new Set(racing.map((res) => res.body.data.order_id)).size, 1, 'one order')
  assert.equal((await orders(me)).length, 2, 'buy-1 and buy-2')
  assertError(
    await me.api.post('/premium/activate', { plan: 'monthly' }, { headers: { 'idempotency-key': 'x'.repeat(65) } }),
    400,
    'validation_error',
    'long key',
  )
  // the same key for another order is refused, and orders nothing (the retries above are the positive control)
  assertError(
    await me.api.post('/premium/activate', { plan: 'yearly' }, { headers: { 'idempotency-key': 'buy-1' } }),
    409,
    'conflict',
    'the key of another order',
  )
  assert.equal((await orders(me)).length, 2, 'still buy-1 and buy-2')
})

test('cancel turns auto-renew off; premium stays until it expires; a double cancel is 409', async () => {
  const [me, never] = await registerUsers(server, 2)
  const bought = await activate(me, { plan: 'monthly' })
  const cancelled = (await me.api.post('/premium/cancel')).body.data
  assert.deepEqual([cancelled.is_premium, cancelled.auto_renew, cancelled.premium_expires_at], [true, false, bought.premium_expires_at])
  assertError(await me.api.post('/premium/cancel'), 409, 'conflict', 'twice')
  assertError(await never.api.post('/premium/cancel'), 409, 'conflict', 'never subscribed')
})

test('promo codes: admin create/list/deactivate with ModLog; discounts; every refusal; once per user', async () => {
  const [buyer, other, third, notAdmin] = await registerUsers(server, 4)
  assertError(
    await notAdmin.api.post('/api/admin/promos', { code: code(), discount_percent: 10, max_uses: 5 }),
    403,
    'forbidden',
    'not an admin',
  )
  for (const bad of [
    { discount_percent: 0 },
    { discount_percent: 101 },
    { max_uses: 0 },
    { code: 'a b' },
    { expires_at: new Date(Date.now() - 1000).toISOString() },
  ]) {
    assertError(
      await admin.api.post('/api/admin/promos', { code: code(), discount_percent: 10, max_uses: 5, ...bad }),
      400,
      'validation_error',
      JSON.stringify(bad),
    )
  }
  const half = await createPromo({ code: code('HALF'), discount_percent: 50, max_uses: 5 })
  assertError(
    await admin.api.post('/api/admin/promos', { code: half.code.toLowerCase(), discount_percent: 10, max_uses: 1 }),
    409,
    'conflict',
    'same code, other case',
  )
  const log = (await admin.api.get('/api/admin/modlog')).body.items
  assert.ok(
    log.some((row: any) => row.action === 'premium.promo_create' && row.details.promo_id === half.id),
    'ModLog',
  )

  const redeemed = (await buyer.api.post('/premium/redeem', { code: half.code.toLowerCase(), plan: 'monthly' })).body.data
  assert.deepEqual([redeemed.is_premium, redeemed.order.amount, redeemed.order.status], [true, 150_00, 'paid'], 'half price, any case')
  assertError(await buyer.api.post('/premium/redeem', { code: half.code }), 409, 'conflict', 'once per user')
  assertError(
    await buyer.api.post('/premium/activate', { plan: 'yearly', promo_code: half.code }),
    409,
    'conflict',
    'once per user, through activate too',
  )

  const free = await createPromo({ code: code('FREE'), discount_percent: 100, max_uses: 1 })
  const gift = (await other.api.post('/premium/redeem', { code: free.code, plan: 'yearly' })).body.data
  assert.deepEqual(
    [gift.is_premium, gift.order.amount, gift.order.status, gift.order.provider],
    [true, 0, 'paid', 'promo'],
    'a 100% code: an order of 0',
  )
  assertError(await third.api.post('/premium/redeem', { code: free.code }), 409, 'conflict', 'used up')
  assertError(await third.api.post('/premium/redeem', { code: 'NOSUCHCODE' }), 404, 'not_found', 'unknown')

  const off = await createPromo({ code: code('OFF'), discount_percent: 20, max_uses: 3 })
  const deactivated = await admin.api.post(`/api/admin/promos/${off.id}/deactivate`)
  assert.equal(deactivated.body.data.is_active, false)
  assertError(await admin.api.post(`/api/admin/promos/${off.id}/deactivate`), 409, 'conflict', 'deactivate twice')
  assertError(await admin.api.post('/api/admin/promos/987654/deactivate'), 404, 'not_found', 'unknown promo')
  assertError(await third.api.post('/premium/redeem', { code: off.code }), 400, 'validation_error', 'inactive')
  assert.equal((await orders(third)).length, 0, 'no order for refused redemptions')

  const listed = (await admin.api.get('/api/admin/promos', { query: { per_page: 100 } })).body.items
  const used = listed.find((p: any) => p.id === half.id)
  assert.deepEqual([used.used_count, used.max_uses, used.discount_percent], [1, 5, 50])
})

test('50 concurrent redemptions of a 10-use code: exactly 10 orders', async () => {
  const buyers = await registerUsers(server, 50)
  const promo = await createPromo({ code: code('RUSH'), discount_percent: 100, max_uses: 10 })
  const results = await Promise.all(buyers.map((buyer) => buyer.api.post('/premium/redeem', { code: promo.code })))
  const won = results.filter((res) => res.status === 200)
  assert.equal(won.length, 10, results.map((r) => r.status).join(','))
  for (const res of results.filter((r) => r.status !== 200)) assertError(res, 409, 'conflict', 'used up')
  const rows = await server.ctx.db.selectFrom('premium_orders').select('id').where('promo_id', '=', promo.id).execute()
  assert.equal(rows.length, 10, 'orders')
  const listed = (await admin.api.get('/api/admin/promos', { query: { per_page: 100 } })).body.items.find((p: any) => p.id === promo.id)
  assert.equal(listed.used_count, 10)
})

test('a code that expires is refused after its expiry', async () => {
  const clock = new TestClock()
  const own = await startTestServer({ clock })
  try {
    const boss = await own.createAdmin()
    const [me] = await registerUsers(own, 1)
    const res = await boss.api.post('/api/admin/promos', {
      code: 'SOONGONE',
      discount_percent: 10,
      max_uses: 5,
      expires_at: new Date(clock.now() + 60_000).toISOString(),
    })
    assert.equal(res.status, 200, res.text)
    clock.advance(61_000)
    assertError(await me.api.post('/premium/redeem', { code: 'SOONGONE' }), 400, 'validation_error', 'expired')
  } finally {
    await own.close()
  }
})

test('the manual provider: orders wait as pending until an admin marks them paid (ModLog), once', async () => {
  const own = await startTestServer({ env: { PAYMENT_PROVIDER: 'manual' } })
  try {
    const boss = await own.createAdmin()
    const [me] = await registerUsers(own, 1)
    assertError(
      await me.api.post('/premium/activate', { plan: 'monthly', payment_method: 'card' }),
      400,
      'validation_error',
      'not a manual method',
    )
    const pending = (await me.api.post('/premium/activate', { plan: 'monthly', payment_method: 'bank_transfer' })).body.data
    assert.deepEqual([pending.is_premium, pending.order.status, pending.order.provider], [false, 'pending', 'manual'])
    assert.equal((await status(me)).is_premium, false)
    const queue = (await boss.api.get('/api/admin/orders', { query: { status: 'pending' } })).body.items
    assert.deepEqual(
      queue.map((o: any) => [o.order_id, o.user_id]),
      [[pending.order_id, me.id]],
    )
    assertError(await me.api.post(`/api/admin/orders/${pending.order_id}/mark-paid`), 403, 'forbidden', 'not an admin')
    const paid = await boss.api.post(`/api/admin/orders/${pending.order_id}/mark-paid`)
    assert.equal(paid.status, 200, paid.text)
    assert.equal(paid.body.data.status, 'paid')
    assert.equal((await status(me)).is_premium, true)
    assertError(await boss.api.post(`/api/admin/orders/${pending.order_id}/mark-paid`), 409, 'conflict', 'already paid')
    assertError(await boss.api.post('/api/admin/orders/987654/mark-paid'), 404, 'not_found', 'unknown order')
    const log = (await boss.api.get('/api/admin/modlog')).body.items
    assert.ok(log.some((row: any) => row.action === 'premium.order_paid' && row.target_id === me.id))
  } finally {
    await own.close()
  }
})

test('expiry and renewal by the job: auto-renew extends through the provider; without it premium ends everywhere', async () => {
  const clock = new TestClock()
  const own = await startTestServer({
    clock,
    env: { PREMIUM_RENEWAL_INTERVAL_SECONDS: '1', PREMIUM_RENEW_BEFORE_SECONDS: '3600', SESSION_TTL_DAYS: '90' },
  })
  try {
    const [renewing, lapsing] = await registerUsers(own, 2)
    const bought = (await renewing.api.post('/premium/activate', { plan: 'monthly' })).body.data
    await lapsing.api.post('/premium/activate', { plan: 'monthly' })
    await lapsing.api.post('/premium/cancel')
    const expiry = Date.parse(bought.premium_expires_at)

    // within the hour before expiry: the job renews the one with auto-renew on
    clock.advance(expiry - clock.now() - 30 * 60_000)
    const renewed = await waitFor(
      async () => {
        const list = await orders(renewing)
        return list.find((o) => o.kind === 'renewal' && o.status === 'paid')
      },
      { timeoutMs: 5000, message: 'a paid renewal order' },
    )
    assert.equal(Date.parse(renewed.premium_until), addMonths(expiry, 1), 'extended from the expiry')
    assert.equal((await orders(lapsing)).filter((o) => o.kind === 'renewal').length, 0, 'no renewal without auto-renew')

    // past the expiry: the lapsed user is premium nowhere, the renewed one still is
    clock.advance(31 * 60_000)
    const [renewedStatus, lapsedStatus] = [await status(renewing), await status(lapsing)]
    assert.equal(renewedStatus.is_premium, true)
    assert.deepEqual([lapsedStatus.is_premium, lapsedStatus.premium_expires_at, lapsedStatus.plan], [false, null, null])
    const [viewer] = await registerUsers(own, 1)
    const peer = async (user: TestUser) => (await viewer.api.get(`${V2}/profile/${user.username}`)).body.data.is_premium
    assert.deepEqual([await peer(renewing), await peer(lapsing)], [true, false], 'in Peer shapes')
    assert.equal((await orders(renewing)).filter((o) => o.kind === 'renewal').length, 1, 'renewed once')
  } finally {
    await own.close()
  }
})

test('a renewal the provider declines stops renewing; premium ends at its expiry', async () => {
  const clock = new TestClock()
  const own: TestServer = await startTestServer({
    clock,
    env: { PREMIUM_RENEWAL_INTERVAL_SECONDS: '1', PREMIUM_RENEW_BEFORE_SECONDS: '3600', SESSION_TTL_DAYS: '90' },
  })
  try {
    const [me] = await registerUsers(own, 1)
    const bought = (await me.api.post('/premium/activate', { plan: 'monthly' })).body.data
    // the card on file starts declining
    await own.ctx.db.updateTable('premium_subscriptions').set({ payment_method: 'declined_card' }).where('user_id', '=', me.id).execute()
    clock.advance(Date.parse(bought.premium_expires_at) - clock.now() - 10 * 60_000)
    await waitFor(async () => ((await orders(me)).some((o) => o.kind === 'renewal' && o.status === 'failed') ? true : undefined), {
      timeoutMs: 5000,
      message: 'a failed renewal',
    })
    assert.equal((await status(me)).auto_renew, false)
    clock.advance(11 * 60_000)
    assert.equal((await status(me)).is_premium, false)
    assert.equal((await orders(me)).filter((o) => o.kind === 'renewal').length, 1, 'not asked again')
  } finally {
    await own.close()
  }
})

test('what premium unlocks: premium sticker packs, the status emoji, a longer bio; each refusal beside its positive control', async () => {
  const [me, friend] = await registerUsers(server, 2)
  const chat = (await me.api.post(`${V2}/messages/send`, { receiver_id: friend.id, content: 'hi' })).body.data.chat_id
  const packs = (await me.api.get(`${V2}/stickers`)).body.items
  assert.deepEqual(
    packs.map((p: any) => [p.pack_id, p.is_premium, p.available]),
    [
      ['basics', false, true],
      ['gold', true, false],
    ],
  )
  const free = packs[0].stickers[0]
  const gold = packs[1].stickers[0]
  const image = await fetch(`${server.url}${gold.url}`)
  assert.deepEqual([image.status, image.headers.get('content-type')], [200, 'image/svg+xml'])
  assert.match(await image.text(), /<animate/, 'premium stickers are animated')

  const sendSticker = (sticker: any) =>
    me.api.post(`${V2}/messages/send`, { chat_id: chat, emoji: sticker.emoji, emoji_file: sticker.emoji_file })
  assert.equal((await sendSticker(free)).status, 200, 'control: a free sticker')
  assertError(await sendSticker(gold), 403, 'premium_required', 'a premium sticker without premium')
  assertError(await me.api.post(`${V2}/profile/update`, { status_emoji: '🔥' }), 403, 'premium_required', 'status emoji without premium')
  assertError(await me.api.post(`${V2}/profile/update`, { bio: 'b'.repeat(71) }), 403, 'premium_required', 'long bio without premium')

  await activate(me, { plan: 'monthly' })
  assert.equal((await me.api.get(`${V2}/stickers`)).body.items[1].available, true)
  const sent = await sendSticker(gold)
  assert.equal(sent.status, 200, sent.text)
  assert.equal(sent.body.data.emoji_url, gold.url)
  assert.equal((await me.api.post(`${V2}/profile/update`, { status_emoji: '🔥' })).body.data.status_emoji, '🔥')
  // a reader without premium sees it, and may forward it
  const forwarded = await friend.api.post(`${V2}/messages/forward`, { message_id: sent.body.data.message_id, target_chat_id: chat })
  assert.equal(forwarded.status, 200, forwarded.text)
})

test('refund (admin): a paid order becomes refunded, its premium is taken off, once; nothing paid or not paid: 409', async () => {
  const [me, gifted] = await registerUsers(server, 2)
  const bought = await activate(me, { plan: 'monthly' })
  assertError(await me.api.post(`/api/admin/orders/${bought.order_id}/refund`), 403, 'forbidden', 'not an admin')
  const res = await admin.api.post(`/api/admin/orders/${bought.order_id}/refund`)
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.data.status, 'refunded')
  const after = await status(me)
  assert.deepEqual([after.is_premium, after.auto_renew], [false, false], 'the month it bought is gone')
  assertError(await admin.api.post(`/api/admin/orders/${bought.order_id}/refund`), 409, 'conflict', 'twice')
  const free = await createPromo({ code: code('GIFT'), discount_percent: 100, max_uses: 1 })
  const gift = (await gifted.api.post('/premium/redeem', { code: free.code })).body.data
  assertError(await admin.api.post(`/api/admin/orders/${gift.order_id}/refund`), 409, 'conflict', 'nothing paid')
  const log = (await admin.api.get('/api/admin/modlog')).body.items
  assert.ok(log.some((row: any) => row.action === 'premium.order_refund' && row.target_id === me.id))
})

test('the provider webhook: a pending async card payment is settled by a signed notification, once; bad signatures and bodies are refused', async () => {
  const secret = 'webhook-secret-for-tests'
  const own = await startTestServer({ env: { PAYMENT_WEBHOOK_SECRET: secret } })
  try {
    const [me, other] = await registerUsers(own, 2)
    const pending = (await me.api.post('/premium/activate', { plan: 'monthly', payment_method: 'async_card' })).body.data
    assert.deepEqual([pending.is_premium, pending.order.status], [false, 'pending'])
    const sign = (body: string, key = secret) => `sha256=${createHmac('sha256', key).update(body).digest('hex')}`
    const notify = (body: string, signature: string, provider = 'test') =>
      fetch(`${own.url}/premium/webhook/${provider}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-tern-signature': signature },
        body,
      })
    const paidBody = JSON.stringify({ order_id: pending.order_id, outcome: 'paid' })

    assert.equal((await notify(paidBody, sign(paidBody, 'wrong'))).status, 401, 'wrong secret')
    assert.equal((await notify(paidBody, 'sha256=00')).status, 401, 'malformed signature')
    assert.equal((await notify(`${paidBody} `, sign(paidBody))).status, 401, 'a changed body')
    assert.equal((await notify('{"order_id":"x"}', sign('{"order_id":"x"}'))).status, 400, 'a wrong body, signed')
    assert.equal((await notify('not json', sign('not json'))).status, 400, 'not JSON, signed')
    const unknown = JSON.stringify({ order_id: 987654, outcome: 'paid' })
    assert.equal((await notify(unknown, sign(unknown))).status, 404, 'unknown order')
    assert.equal((await notify(paidBody, sign(paidBody), 'manual')).status, 404, 'a provider without webhooks')
    assert.equal((await status(me)).is_premium, false, 'nothing settled by the refusals')

    const ok = await notify(paidBody, sign(paidBody))
    assert.equal(ok.status, 200, await ok.clone().text())
    assert.deepEqual((await ok.json()).data, { order_id: pending.order_id, status: 'paid' })
    assert.equal((await status(me)).is_premium, true)
    const expiry = (await status(me)).premium_expires_at
    const again = await notify(paidBody, sign(paidBody))
    assert.deepEqual((await again.json()).data.status, 'paid', 'a repeat answers the order')
    assert.equal((await status(me)).premium_expires_at, expiry, 'not extended twice')

    const second = (await other.api.post('/premium/activate', { plan: 'monthly', payment_method: 'async_card' })).body.data
    const failedBody = JSON.stringify({ order_id: second.order_id, outcome: 'failed' })
    assert.deepEqual((await (await notify(failedBody, sign(failedBody))).json()).data.status, 'failed')
    assert.equal((await status(other)).is_premium, false)
  } finally {
    await own.close()
  }
  // without PAYMENT_WEBHOOK_SECRET there is no webhook at all
  assert.equal(
    (await fetch(`${server.url}/premium/webhook/test`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
      .status,
    404,
  )
})

test('without PAYMENT_PROVIDER nothing can be bought (503 payments_unavailable, no order), but a 100% code still gives premium', async () => {
  const bare = await startTestServer({ env: { PAYMENT_PROVIDER: '' } })
  const bareAdmin = await bare.createAdmin()
  assert.equal(bare.ctx.config.paymentProvider, null)
  const [buyer, gifted] = await registerUsers(bare, 2)
  assertError(await buyer.api.post('/premium/activate', { plan: 'monthly' }), 503, 'payments_unavailable', 'no provider')
  assertError(await buyer.api.post(`${V2}/premium/activate`, { plan: 'yearly' }), 503, 'payments_unavailable', 'no provider, V2')
  const half = (await bareAdmin.api.post('/api/admin/promos', { code: code('NOPAYHALF'), discount_percent: 50, max_uses: 1 })).body.data
  assertError(
    await buyer.api.post('/premium/redeem', { code: half.code }),
    503,
    'payments_unavailable',
    'half price still needs a provider',
  )
  assert.equal((await buyer.api.get('/premium/orders')).body.items.length, 0, 'no order was written')
  assert.equal((await buyer.api.get('/premium/status')).body.data.is_premium, false)
  // the refused redemption gave the code's use back: its one use is still there
  const listed = (await bareAdmin.api.get('/api/admin/promos', { query: { per_page: 100 } })).body.items
  assert.equal(listed.find((p: any) => p.id === half.id).used_count, 0)
  // positive control: a code that makes the order free needs no provider
  const free = (await bareAdmin.api.post('/api/admin/promos', { code: code('NOPAYFREE'), discount_percent: 100, max_uses: 1 })).body.data
  const gift = await gifted.api.post('/premium/redeem', { code: free.code })
  assert.equal(gift.status, 200, gift.text)
  assert.equal(gift.body.data.is_premium, true)
  await bare.close()
})
