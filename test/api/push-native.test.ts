/**
 * Native push tokens. With FCM_SERVICE_ACCOUNT_FILE set, FCM tokens go through FCM's HTTP v1 API:
 * here a local stand-in for Google's token endpoint (which checks the RS256 assertion against the
 * service account's public key) and for FCM's messages:send. Without a sender a token is kept and
 * skipped with a log line.
 */
import assert from 'node:assert/strict'
import { createVerify, generateKeyPairSync } from 'node:crypto'
import { once } from 'node:events'
import fs from 'node:fs'
import http from 'node:http'
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
    const reply = (status: number, value: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value))
    if (request.url === '/token') {
      const assertion = new URLSearchParams(body).get('assertion') ?? ''
      const [header, claims, signature] = assertion.split('.')
      const valid = createVerify('RSA-SHA256').update(`${header}.${claims}`).verify(publicKey, Buffer.from(signature ?? '', 'base64url'))
      if (!valid) return reply(401, { error: 'invalid_grant' })
      assertions.push(JSON.parse(Buffer.from(claims, 'base64url').toString()).scope)
      return reply(200, { access_token: 'test-access-token', expires_in: 3600 })
    }
    if (request.url === '/v1/projects/tern-test/messages:send') {
      if (request.headers.authorization !== 'Bearer test-access-token') return reply(401, { error: { status: 'UNAUTHENTICATED' } })
      const { message } = JSON.parse(body)
      if (message.token === 'unregistered-token') return reply(404, { error: { status: 'NOT_FOUND', details: [{ errorCode: 'UNREGISTERED' }] } })
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
fs.writeFileSync(accountFile, JSON.stringify({
  type: 'service_account',
  project_id: 'tern-test',
  client_email: 'tern@tern-test.iam.gserviceaccount.com',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
  token_uri: `${fakeUrl}/token`,
}))
const server = await startTestServer({ env: { FCM_SERVICE_ACCOUNT_FILE: accountFile, FCM_API_URL: fakeUrl, PUSH_DELIVERY_INTERVAL_MS: '100' } })
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
  await waitFor(async () => (log.entries().some((line: any) => /no apns sender is configured/.test(line.msg)) ? true : undefined), { timeoutMs: 5000, message: 'skip logged' })
  const kept = await quiet.ctx.db.selectFrom('push_subscriptions').select('id').where('id', '=', registered.body.data.id).execute()
  assert.equal(kept.length, 1)
})
