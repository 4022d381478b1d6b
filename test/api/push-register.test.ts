/**
 * Push registration rules (on a server with the default WEBHOOK_ALLOW_PRIVATE=false, so loopback
 * and private endpoints are refused as in production) and the VAPID key across a restart.
 * Subscriptions here are never sent to: the endpoints need not exist.
 */
import assert from 'node:assert/strict'
import { createECDH, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import webPush from 'web-push'
import { V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'

const server = await startTestServer({ env: { PUSH_MAX_SUBSCRIPTIONS: '3' } })

/** A well-formed subscription with real keys at a public address (nothing is sent to it). */
function subscription(endpoint = `https://8.8.8.8/push/${randomBytes(8).toString('hex')}`) {
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  return { endpoint, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') } }
}

test('register answers {id}; the same endpoint again updates the row instead of adding one; both mounts answer', async () => {
  const bob = await server.registerUser()
  const sub = subscription()
  const first = await bob.api.post(`${V2}/push/register`, { subscription: sub })
  assert.equal(first.status, 200, first.text)
  assert.deepEqual(Object.keys(first.body.data), ['id'])
  const again = await bob.api.post('/api/push/register', { subscription: { ...sub, keys: subscription().keys, expirationTime: null } })
  assert.equal(again.status, 200, again.text)
  assert.equal(again.body.data.id, first.body.data.id)
  const rows = await server.ctx.db.selectFrom('push_subscriptions').selectAll().where('user_id', '=', bob.id).execute()
  assert.equal(rows.length, 1)
  assert.equal(rows[0].kind, 'webpush')

  const native = await bob.api.post(`${V2}/push/register`, { push_token: 'apns-device-token-abc', platform: 'apns' })
  assert.equal(native.status, 200, native.text)
  assert.equal(
    (await bob.api.post(`${V2}/push/register`, { push_token: 'apns-device-token-abc', platform: 'apns' })).body.data.id,
    native.body.data.id,
  )
})

test("an endpoint or token is its first registrant's: another account's register of it is 409 and moves nothing; once removed it is free", async () => {
  const [owner, thief] = [await server.registerUser(), await server.registerUser()]
  const sub = subscription()
  const owned = await owner.api.post(`${V2}/push/register`, { subscription: sub })
  assert.equal(owned.status, 200, owned.text)
  await owner.api.post(`${V2}/push/register`, { push_token: 'fcm-device-token-owned', platform: 'fcm' })
  const before = await server.ctx.db.selectFrom('push_subscriptions').selectAll().where('user_id', '=', owner.id).orderBy('id').execute()
  assert.equal(before.length, 2)
  for (const body of [
    { subscription: sub },
    { subscription: { ...sub, keys: subscription().keys } },
    { push_token: 'fcm-device-token-owned', platform: 'fcm' },
  ]) {
    const taken = await thief.api.post(`${V2}/push/register`, body)
    assert.equal(taken.status, 409, taken.text)
    assert.equal(taken.body.error.code, 'conflict')
  }
  const after = await server.ctx.db.selectFrom('push_subscriptions').selectAll().where('user_id', '=', owner.id).orderBy('id').execute()
  assert.deepEqual(after, before, "the owner's rows are untouched (user, session, keys)")
  assert.equal((await server.ctx.db.selectFrom('push_subscriptions').select('id').where('user_id', '=', thief.id).execute()).length, 0)
  // positive control: once the owner removes it (signs out here), another account may register it
  assert.equal((await owner.api.request('DELETE', `${V2}/push/register`, { id: owned.body.data.id })).status, 200)
  const free = await thief.api.post(`${V2}/push/register`, { subscription: sub })
  assert.equal(free.status, 200, free.text)
})

test('bad registrations are 400 in the envelope and store nothing', async () => {
  const bob = await server.registerUser()
  const good = subscription()
  const offCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString('base64url')
  const cases: [string, unknown, RegExp][] = [
    ['http endpoint', { subscription: { ...good, endpoint: 'http://8.8.8.8/push' } }, /https/],
    ['loopback endpoint', { subscription: { ...good, endpoint: 'https://127.0.0.1/push' } }, /private/],
    ['private endpoint', { subscription: { ...good, endpoint: 'https://10.1.2.3/push' } }, /private/],
    ['link-local endpoint', { subscription: { ...good, endpoint: 'https://[fe80::1]/push' } }, /private/],
    ['IPv4-compatible loopback', { subscription: { ...good, endpoint: 'https://[::127.0.0.1]/push' } }, /private/],
    ['IPv4-compatible loopback (hex)', { subscription: { ...good, endpoint: 'https://[::7f00:1]/push' } }, /private/],
    ['IPv4-translated loopback', { subscription: { ...good, endpoint: 'https://[::ffff:0:127.0.0.1]/push' } }, /private/],
    ['6to4 of a private address', { subscription: { ...good, endpoint: 'https://[2002:a00:1::1]/push' } }, /private/],
    ['Teredo', { subscription: { ...good, endpoint: 'https://[2001::1]/push' } }, /private/],
    ['not a URL', { subscription: { ...good, endpoint: 'push me' } }, /URL/],
    ['p256dh too short', { subscription: { ...good, keys: { ...good.keys, p256dh: good.keys.p256dh.slice(0, 40) } } }, /p256dh/],
    ['p256dh not base64url', { subscription: { ...good, keys: { ...good.keys, p256dh: `${good.keys.p256dh.slice(0, -2)}!?` } } }, /p256dh/],
    ['p256dh off the curve', { subscription: { ...good, keys: { ...good.keys, p256dh: offCurve } } }, /p256dh/],
    [
      'p256dh compressed',
      {
        subscription: {
          ...good,
          keys: { ...good.keys, p256dh: Buffer.concat([Buffer.from([2]), Buffer.alloc(64, 1)]).toString('base64url') },
        },
      },
      /p256dh/,
    ],
    ['auth of 15 bytes', { subscription: { ...good, keys: { ...good.keys, auth: randomBytes(15).toString('base64url') } } }, /auth/],
    ['keys missing', { subscription: { endpoint: good.endpoint } }, /keys/],
    ['unknown platform', { push_token: 'abc', platform: 'windows' }, /platform/],
    ['token without platform', { push_token: 'abc' }, /platform/],
    ['token with spaces', { push_token: 'a b', platform: 'fcm' }, /push_token/],
    ['both kinds', { subscription: good, push_token: 'abc', platform: 'fcm' }, /either/],
    ['neither', {}, /either/],
    ['subscription not an object', { subscription: 'https://8.8.8.8/x' }, /subscription/],
  ]
  for (const [what, body, message] of cases) {
    const res = await bob.api.post(`${V2}/push/register`, body)
    assert.equal(res.status, 400, `${what}: ${res.text}`)
    assert.equal(res.body.success, false, what)
    assert.equal(res.body.error.code, 'validation_error', what)
    assert.match(res.body.error.message, message, what)
  }
  assert.equal((await server.ctx.db.selectFrom('push_subscriptions').select('id').where('user_id', '=', bob.id).execute()).length, 0)
  assert.equal((await server.api.post(`${V2}/push/register`, { subscription: good })).status, 401)
})

test('a user holds at most PUSH_MAX_SUBSCRIPTIONS subscriptions (409); updating one of them still works', async () => {
  const bob = await server.registerUser()
  const subs = [subscription(), subscription(), subscription()]
  for (const sub of subs) assert.equal((await bob.api.post(`${V2}/push/register`, { subscription: sub })).status, 200)
  const over = await bob.api.post(`${V2}/push/register`, { subscription: subscription() })
  assert.equal(over.status, 409, over.text)
  assert.equal(over.body.error.code, 'conflict')
  assert.equal((await bob.api.post(`${V2}/push/register`, { subscription: subs[1] })).status, 200)
})

test("DELETE removes one of mine by id, endpoint or token; anyone else's or an unknown one is 404", async () => {
  const [bob, eve] = [await server.registerUser(), await server.registerUser()]
  const [a, b] = [subscription(), subscription()]
  const idA = (await bob.api.post(`${V2}/push/register`, { subscription: a })).body.data.id
  await bob.api.post(`${V2}/push/register`, { subscription: b })
  await bob.api.post(`${V2}/push/register`, { push_token: 'fcm:tok-1', platform: 'fcm' })

  for (const body of [{ id: idA }, { endpoint: b.endpoint }, { push_token: 'fcm:tok-1' }]) {
    const stolen = await eve.api.request('DELETE', `${V2}/push/register`, body)
    assert.equal(stolen.status, 404, stolen.text)
    assert.equal(stolen.body.error.code, 'not_found')
  }
  const byId = await bob.api.request('DELETE', `${V2}/push/register`, { id: idA })
  assert.equal(byId.status, 200, byId.text)
  assert.equal(byId.body.data.id, idA)
  assert.equal((await bob.api.request('DELETE', `${V2}/push/register`, { id: idA })).status, 404)
  assert.equal((await bob.api.request('DELETE', '/api/push/register', { endpoint: b.endpoint })).status, 200)
  assert.equal((await bob.api.request('DELETE', `${V2}/push/register`, { push_token: 'fcm:tok-1' })).status, 200)
  assert.equal((await server.ctx.db.selectFrom('push_subscriptions').select('id').where('user_id', '=', bob.id).execute()).length, 0)
  assert.equal((await bob.api.request('DELETE', `${V2}/push/register`, {})).status, 400)
  assert.equal((await bob.api.request('DELETE', `${V2}/push/register`, { id: 1, endpoint: 'x' })).status, 400)
  assert.equal((await server.api.request('DELETE', `${V2}/push/register`, { id: 1 })).status, 401)
})

test('the VAPID public key is generated once, kept in DATA_DIR (0600) and the same after a restart', async () => {
  const own = await startTestServer()
  const before = await own.api.get(`${V2}/push/vapid-public-key`)
  assert.equal(before.status, 200, before.text)
  const key = before.body.data.public_key as string
  assert.match(key, /^[A-Za-z0-9_-]+$/)
  const raw = Buffer.from(key, 'base64url')
  assert.equal(raw.length, 65)
  assert.equal(raw[0], 4)
  const file = path.join(own.dataDir, 'vapid.json')
  assert.equal(fs.statSync(file).mode & 0o777, 0o600)
  assert.equal((await own.api.get('/api/push/vapid-public-key')).body.data.public_key, key)
  const restarted = await own.restart()
  assert.equal((await restarted.api.get(`${V2}/push/vapid-public-key`)).body.data.public_key, key)
})

test('VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY are used when set (instances share them)', async () => {
  const keys = webPush.generateVAPIDKeys()
  const own = await startTestServer({ env: { VAPID_PUBLIC_KEY: keys.publicKey, VAPID_PRIVATE_KEY: keys.privateKey } })
  assert.equal((await own.api.get(`${V2}/push/vapid-public-key`)).body.data.public_key, keys.publicKey)
  assert.equal(fs.existsSync(path.join(own.dataDir, 'vapid.json')), false)
})
