/**
 * Native push tokens. With FCM_SERVICE_ACCOUNT_FILE set, FCM tokens go through FCM's HTTP v1 API:
 * here a local stand-in for Google's token endpoint (which checks the RS256 assertion against the
 * service account's public key) and for FCM's messages:send. With the APNS_* variables, APNs tokens
 * go over HTTP/2 to a local stand-in for APNs (cleartext HTTP/2 on loopback; it checks the ES256
 * provider token). Without a sender a token is kept and skipped with a log line.
 */
import assert from 'node:assert/strict'
import { createVerify, generateKeyPairSync, verify } from 'node:crypto'
import { once } from 'node:events'
import fs from 'node:fs'
import http from 'node:http'
import http2 from 'node:http2'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { test } from 'node:test'
import { captureLog } from '../harness/log-capture.js'
import { V2, send } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { tempDir } from '../harness/database.js'
import { waitFor } from '../harness/wait.js'

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const received: { token: string; payload: any; collapseKey: string | undefined }[] = []
const assertions: string[] = []

const fake = http.createServer((request, response) => {
  let body = ''
  request.on('data', (chunk) => (body += chunk))
  request.on('end', () => {
    const reply = (status: number, value: unknown) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value))
    if (request.url === '/token') {
      const assertion = new URLSearchParams(body).get('assertion') ?? ''
      const [header, claims, signature] = assertion.split('.')
      const valid = createVerify('RSA-SHA256')
        .update(`${header}.${claims}`)
        .verify(publicKey, Buffer.from(signature ?? '', 'base64url'))
      if (!valid) return reply(401, { error: 'invalid_grant' })
      assertions.push(JSON.parse(Buffer.from(claims, 'base64url').toString()).scope)
      return reply(200, { access_token: 'test-access-token', expires_in: 3600 })
    }
    if (request.url === '/v1/projects/tern-test/messages:send') {
      if (request.headers.authorization !== 'Bearer test-access-token') return reply(401, { error: { status: 'UNAUTHENTICATED' } })
      const { message } = JSON.parse(body)
      if (message.token === 'unregistered-token')
        return reply(404, { error: { status: 'NOT_FOUND', details: [{ errorCode: 'UNREGISTERED' }] } })
      received.push({ token: message.token, payload: JSON.parse(message.data.payload), collapseKey: message.android?.collapse_key })
      return reply(200, { name: 'projects/tern-test/messages/1' })
    }
    reply(404, {})
  })
})
fake.listen(0, '127.0.0.1')
await once(fake, 'listening')
const fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`
const accountFile = path.join(tempDir('tern-fcm-'), 'service-account.json')
fs.writeFileSync(
  accountFile,
  JSON.stringify({
    type: 'service_account',
    project_id: 'tern-test',
    client_email: 'tern@tern-test.iam.gserviceaccount.com',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    token_uri: `${fakeUrl}/token`,
  }),
)
const server = await startTestServer({
  env: { FCM_SERVICE_ACCOUNT_FILE: accountFile, FCM_API_URL: fakeUrl, PUSH_DELIVERY_INTERVAL_MS: '100' },
})
test.after(() => fake.close())

test('an FCM token of an offline user gets the message through FCM HTTP v1, collapsed per chat', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  assert.equal((await bob.api.post(`${V2}/push/register`, { push_token: 'bob-fcm-token', platform: 'fcm' })).status, 200)
  const message = await send(alice, bob, 'to the phone')
  const got = await waitFor(async () => received.find((r) => r.token === 'bob-fcm-token'), { timeoutMs: 5000, message: 'FCM message' })
  assert.deepEqual(got.payload.sender, { user_id: alice.id, username: alice.username, display_name: alice.username })
  assert.equal(got.payload.message_id, message.message_id)
  assert.equal(got.payload.body, 'to the phone')
  assert.equal(got.collapseKey, `chat-${message.chat_id}`)
  assert.ok(assertions.includes('https://www.googleapis.com/auth/firebase.messaging'))
})

test('an FCM token FCM calls unregistered is deleted; the admin send counts FCM deliveries', async () => {
  const [admin, bob] = [await server.createAdmin(), await server.registerUser()]
  const gone = await bob.api.post(`${V2}/push/register`, { push_token: 'unregistered-token', platform: 'fcm' })
  await bob.api.post(`${V2}/push/register`, { push_token: 'bob-second-token', platform: 'fcm' })
  const res = await admin.api.post(`${V2}/push/send`, { user_id: bob.id, title: 'Hello', body: 'phones' })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.data, { sent: 1, failed: 1 })
  assert.deepEqual(received.at(-1)?.payload, { type: 'admin', title: 'Hello', body: 'phones' })
  const left = await server.ctx.db.selectFrom('push_subscriptions').select('id').where('id', '=', gone.body.data.id).execute()
  assert.equal(left.length, 0)
})

test('without a sender for the platform an APNs token is kept and skipped with a log line', async () => {
  const log = captureLog()
  const quiet = await startTestServer({ env: { PUSH_DELIVERY_INTERVAL_MS: '100' }, log: log.logger })
  const [alice, bob] = [await quiet.registerUser(), await quiet.registerUser()]
  const registered = await bob.api.post(`${V2}/push/register`, { push_token: 'apns-token', platform: 'apns' })
  assert.equal(registered.status, 200, registered.text)
  await send(alice, bob, 'nobody delivers this')
  await waitFor(async () => (log.entries().some((line: any) => /no apns sender is configured/.test(line.msg)) ? true : undefined), {
    timeoutMs: 5000,
    message: 'skip logged',
  })
  const kept = await quiet.ctx.db.selectFrom('push_subscriptions').select('id').where('id', '=', registered.body.data.id).execute()
  assert.equal(kept.length, 1)
})

const apnsKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const apnsReceived: { path: string; headers: http2.IncomingHttpHeaders; body: any }[] = []
const apns = http2.createServer((request, response) => {
  let body = ''
  request.on('data', (chunk) => (body += chunk))
  request.on('end', () => {
    const [header, claims, signature] = String(request.headers.authorization ?? '')
      .replace(/^bearer /, '')
      .split('.')
    const valid = verify(
      'sha256',
      Buffer.from(`${header}.${claims}`),
      { key: apnsKeys.publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature ?? '', 'base64url'),
    )
    const claimed = valid ? JSON.parse(Buffer.from(claims, 'base64url').toString()) : null
    const kid = valid ? JSON.parse(Buffer.from(header, 'base64url').toString()).kid : null
    if (!valid || claimed.iss !== 'TEAM123456' || kid !== 'KEY1234567')
      return response.writeHead(403).end(JSON.stringify({ reason: 'InvalidProviderToken' }))
    if (request.url === '/3/device/dead00') return response.writeHead(410).end(JSON.stringify({ reason: 'Unregistered' }))
    apnsReceived.push({ path: request.url, headers: request.headers, body: JSON.parse(body) })
    response.writeHead(200).end()
  })
})
const apnsSessions = new Set<http2.ServerHttp2Session>()
apns.on('session', (session) => apnsSessions.add(session))
apns.listen(0, '127.0.0.1')
await once(apns, 'listening')
test.after(() => {
  // Tern keeps its HTTP/2 connection to APNs open: end it from this side
  for (const session of apnsSessions) session.destroy()
  apns.close()
})
const p8 = path.join(tempDir('tern-apns-'), 'AuthKey.p8')
fs.writeFileSync(p8, apnsKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }))
const apple = await startTestServer({
  env: {
    APNS_KEY_FILE: p8,
    APNS_KEY_ID: 'KEY1234567',
    APNS_TEAM_ID: 'TEAM123456',
    APNS_TOPIC: 'org.tern.app',
    APNS_URL: `http://127.0.0.1:${(apns.address() as AddressInfo).port}`,
    PUSH_DELIVERY_INTERVAL_MS: '100',
  },
})

test('an APNs token of an offline user gets an alert over HTTP/2 with the provider token, topic and collapse id', async () => {
  const [alice, bob] = [await apple.registerUser({ display_name: 'Alice' }), await apple.registerUser()]
  assert.equal((await bob.api.post(`${V2}/push/register`, { push_token: 'abc123', platform: 'apns' })).status, 200)
  const message = await send(alice, bob, 'hi phone')
  const got = await waitFor(async () => apnsReceived.find((r) => r.path === '/3/device/abc123'), {
    timeoutMs: 5000,
    message: 'APNs request',
  })
  assert.equal(got.headers['apns-topic'], 'org.tern.app')
  assert.equal(got.headers['apns-push-type'], 'alert')
  assert.equal(got.headers['apns-collapse-id'], `chat-${message.chat_id}`)
  assert.deepEqual(got.body.aps.alert, { title: 'Alice', body: 'hi phone' })
  assert.equal(got.body.tern.message_id, message.message_id)
  assert.equal(got.body.tern.sender.user_id, alice.id)
})

test('an APNs token answered 410 is deleted; a token with path characters stays one path segment', async () => {
  const [admin, bob] = [await apple.createAdmin(), await apple.registerUser()]
  const dead = await bob.api.post(`${V2}/push/register`, { push_token: 'dead00', platform: 'apns' })
  await bob.api.post(`${V2}/push/register`, { push_token: '../../x?y#z', platform: 'apns' })
  const res = await admin.api.post(`${V2}/push/send`, { user_id: bob.id, title: 'T', body: 'B' })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.data, { sent: 1, failed: 1 })
  assert.ok(apnsReceived.some((r) => r.path === '/3/device/..%2F..%2Fx%3Fy%23z'))
  assert.equal((await apple.ctx.db.selectFrom('push_subscriptions').select('id').where('id', '=', dead.body.data.id).execute()).length, 0)
})
