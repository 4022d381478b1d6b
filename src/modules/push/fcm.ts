/**
 * The FCM sender (Firebase Cloud Messaging HTTP v1): configured by FCM_SERVICE_ACCOUNT_FILE, a
 * Google service-account JSON (project_id, client_email, private_key, token_uri). An OAuth access
 * token is obtained with a signed JWT (RS256, the firebase.messaging scope) and reused until shortly
 * before it expires. The notification goes as a data message: `data.payload` is the same JSON a
 * Web Push carries, `collapse_key` the chat's topic. 404 UNREGISTERED means the token is gone.
 */
import { createSign } from 'node:crypto'
import fs from 'node:fs'
import type { AppContext } from '../../context.js'
import { CONFIGURED, outboundFetcher } from '../../lib/outbound-http.js'
import type { PushSender, SendOutcome, WebPushOptions } from './send.js'

interface ServiceAccount {
  project_id: string
  client_email: string
  private_key: string
  token_uri: string
}

const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging'
/** a token is renewed this long before it expires */
const RENEW_EARLY_MS = 5 * 60_000

function readAccount(file: string): ServiceAccount {
  let parsed: unknown
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch (error) {
    throw new Error(`FCM_SERVICE_ACCOUNT_FILE: cannot read ${file} as JSON (${(error as Error).message})`)
  }
  const fields = (parsed ?? {}) as Record<string, unknown>
  const text = (name: string) => (typeof fields[name] === 'string' && fields[name] !== '' ? (fields[name] as string) : null)
  const account = {
    project_id: text('project_id'),
    client_email: text('client_email'),
    private_key: text('private_key'),
    token_uri: text('token_uri') ?? 'https://oauth2.googleapis.com/token',
  }
  if (!account.project_id || !account.client_email || !account.private_key) {
    throw new Error(`FCM_SERVICE_ACCOUNT_FILE: ${file} is not a service-account key (project_id, client_email, private_key)`)
  }
  return account as ServiceAccount
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

export function createFcmSender(ctx: AppContext, file: string): PushSender {
  const account = readAccount(file)
  // FCM's token and send endpoints are the operator's configuration (FCM_API_URL), through the one client
  const fcmFetch = outboundFetcher(CONFIGURED)
  let cached: { token: string; until: number } | null = null

  async function accessToken(signal: AbortSignal): Promise<string> {
    const now = Date.now()
    if (cached && cached.until > now) return cached.token
    const seconds = Math.floor(now / 1000)
    const unsigned = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ iss: account.client_email, scope: SCOPE, aud: account.token_uri, iat: seconds, exp: seconds + 3600 })}`
    const signature = createSign('RSA-SHA256').update(unsigned).sign(account.private_key).toString('base64url')
    const res = await fcmFetch(account.token_uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: `${unsigned}.${signature}` }),
      signal,
    })
    const body = (await res.json().catch(() => null)) as { access_token?: unknown; expires_in?: unknown } | null
    if (!res.ok || typeof body?.access_token !== 'string') throw new Error(`FCM token request answered ${res.status}`)
    const lifetime = typeof body.expires_in === 'number' ? body.expires_in * 1000 : 3600_000
    cached = { token: body.access_token, until: now + Math.max(lifetime - RENEW_EARLY_MS, 60_000) }
    return cached.token
  }

  return {
    platform: 'fcm',
    async send(token: string, payload: string, options: WebPushOptions, signal: AbortSignal): Promise<SendOutcome> {
      const bearer = await accessToken(signal)
      const message = {
        token,
        data: { payload },
        android: {
          priority: options.urgency === 'high' ? 'high' : 'normal',
          ttl: `${options.ttlSeconds}s`,
          ...(options.topic ? { collapse_key: options.topic } : {}),
        },
        ...(options.topic ? { apns: { headers: { 'apns-collapse-id': options.topic } } } : {}),
      }
      const res = await fcmFetch(`${ctx.config.fcmApiUrl}/v1/projects/${encodeURIComponent(account.project_id)}/messages:send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message }),
        signal,
      })
      const text = await res.text()
      if (res.ok) return 'sent'
      if (res.status === 404 || (res.status === 400 && text.includes('registration token'))) return 'gone'
      if (res.status === 401) cached = null
      ctx.log.info({ status: res.status }, 'FCM refused a notification')
      return 'failed'
    },
  }
}
