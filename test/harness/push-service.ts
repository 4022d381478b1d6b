/**
 * startPushService(): a real Web Push service on a loopback port (the `web-push-testing` package,
 * run in this process): it hands out subscriptions with real P-256 keys, checks each push's VAPID
 * JWT against the subscriber's applicationServerKey, decrypts the aes128gcm payload with the
 * subscription's private key and keeps the plaintext for the test to read. It can also expire a
 * subscription (the next push gets 410 Gone).
 *
 * When it cannot start, `pushServiceOrSkip` says so loudly and the tests skip, unless
 * TEST_REQUIRE_PUSH=1 (CI), where that is a failure.
 */
import { once } from 'node:events'
import { createRequire } from 'node:module'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after } from 'node:test'

export interface PushSubscriptionJson {
  endpoint: string
  keys: { p256dh: string; auth: string }
}

export interface TestSubscription {
  subscription: PushSubscriptionJson
  clientHash: string
}

export interface PushService {
  url: string
  /** a new subscription for a client of the server whose VAPID public key is `applicationServerKey` */
  subscribe(applicationServerKey: string): Promise<TestSubscription>
  /** the decrypted payloads this subscription received, parsed as JSON, in order */
  messages(sub: TestSubscription): Promise<any[]>
  /** unsubscribes it at the service: the next push to it is answered 410 */
  expire(sub: TestSubscription): Promise<void>
  close(): Promise<void>
}

const require = createRequire(import.meta.url)

export async function startPushService(): Promise<PushService> {
  // web-push-testing's own server class listens on a fixed port and exits the process on errors;
  // its express app and request handlers are used here on an ephemeral loopback port instead.
  const TestingServer = require('web-push-testing/src/server.js')
  const { PushApiModel } = require('web-push-testing/src/PushApiModel.js')
  const model = new PushApiModel()
  const testing = new TestingServer(model, 0)
  const listener: Server = testing._app.listen(0, '127.0.0.1')
  await once(listener, 'listening')
  const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`
  model.notifyUrl = `${url}/notify/`
  testing.setRequestHandlers()

  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`push service ${path}: ${res.status} ${text}`)
    return (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : null
  }
  const service: PushService = {
    url,
    async subscribe(applicationServerKey) {
      const { data } = await call('/subscribe', { userVisibleOnly: 'true', applicationServerKey })
      return { subscription: { endpoint: data.endpoint, keys: data.keys }, clientHash: data.clientHash }
    },
    async messages(sub) {
      const { data } = await call('/get-notifications', { clientHash: sub.clientHash })
      return (data.messages as string[]).map((text) => JSON.parse(text))
    },
    async expire(sub) {
      await call(`/expire-subscription/${sub.clientHash}`, {})
    },
    async close() {
      listener.closeAllConnections()
      await new Promise<void>((resolve) => listener.close(() => resolve()))
    },
  }
  after(() => service.close())
  return service
}

/** The push service, or null after a loud skip notice (a failure with TEST_REQUIRE_PUSH=1). */
export async function pushServiceOrSkip(): Promise<PushService | null> {
  try {
    return await startPushService()
  } catch (error) {
    if (process.env.TEST_REQUIRE_PUSH === '1') throw error
    console.warn(
      `\n*** SKIPPING push tests: the web-push-testing push service could not start (${(error as Error).message}); set TEST_REQUIRE_PUSH=1 to make this a failure ***\n`,
    )
    return null
  }
}
