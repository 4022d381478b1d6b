/**
 * The APNs sender (token-based authentication over HTTP/2): configured by APNS_KEY_FILE (the .p8
 * key), APNS_KEY_ID, APNS_TEAM_ID and APNS_TOPIC (the app's bundle id); APNS_URL picks production
 * or the sandbox. The provider JWT (ES256) is renewed every 50 minutes, as Apple asks (20 to 60).
 * One HTTP/2 connection is kept while in use (closed after 5 idle minutes) and opened again when needed. The alert shows the sender (or the
 * title) and the text when there is one; `tern` carries the same JSON a Web Push carries. 410, or
 * 400 BadDeviceToken, means the token is gone.
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto'
import fs from 'node:fs'
import type http2 from 'node:http2'
import type { AppContext } from '../../context.js'
import type { Config } from '../../config.js'
import { outboundHttp2 } from '../../lib/outbound-http.js'
import type { PushSender, SendOutcome, WebPushOptions } from './send.js'

const JWT_LIFETIME_MS = 50 * 60_000
/** an HTTP/2 connection to APNs unused this long is closed (the next notification opens another) */
const IDLE_CLOSE_MS = 5 * 60_000

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** The alert a person sees, from the notification's JSON. */
function alertOf(payload: string): { title: string; body: string } {
  const data = JSON.parse(payload) as {
    type?: string
    title?: unknown
    body?: unknown
    sender?: { display_name?: string; username?: string }
    call_type?: string
    chat_title?: string
    count?: unknown
  }
  if (data.type === 'admin') return { title: String(data.title ?? ''), body: String(data.body ?? '') }
  const sender = data.sender?.display_name || data.sender?.username || 'Tern'
  if (data.type === 'call') return { title: String(sender), body: data.call_type === 'video' ? 'Incoming video call' : 'Incoming call' }
  const title = data.chat_title ? `${sender} in ${data.chat_title}` : String(sender)
  const count = typeof data.count === 'number' && data.count > 1 ? ` (${data.count} messages)` : ''
  return { title, body: `${typeof data.body === 'string' ? data.body : 'New message'}${count}` }
}

export function createApnsSender(ctx: AppContext, config: NonNullable<Config['apns']>): PushSender {
  let key: KeyObject
  try {
    key = createPrivateKey(fs.readFileSync(config.keyFile, 'utf8'))
  } catch (error) {
    throw new Error(`APNS_KEY_FILE: cannot read ${config.keyFile} as a .p8 private key (${(error as Error).message})`)
  }
  let jwt: { value: string; until: number } | null = null
  let session: http2.ClientHttp2Session | null = null

  const providerToken = () => {
    const now = Date.now()
    if (jwt && jwt.until > now) return jwt.value
    const unsigned = `${b64({ alg: 'ES256', kid: config.keyId })}.${b64({ iss: config.teamId, iat: Math.floor(now / 1000) })}`
    const signature = sign('sha256', Buffer.from(unsigned), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')
    jwt = { value: `${unsigned}.${signature}`, until: now + JWT_LIFETIME_MS }
    return jwt.value
  }
  const connection = () => {
    if (session && !session.closed && !session.destroyed) return session
    // an idle connection must not keep the process alive, nor stay open for ever
    const opened = outboundHttp2(ctx.config.apnsUrl, IDLE_CLOSE_MS)
    opened.on('error', (err) => ctx.log.info({ err }, 'APNs connection failed'))
    opened.on('close', () => {
      if (session === opened) session = null
    })
    session = opened
    return opened
  }

  return {
    platform: 'apns',
    send(token: string, payload: string, options: WebPushOptions, signal: AbortSignal): Promise<SendOutcome> {
      const body = JSON.stringify({
        aps: { alert: alertOf(payload), sound: 'default', 'mutable-content': 1, ...(options.topic ? { 'thread-id': options.topic } : {}) },
        tern: JSON.parse(payload),
      })
      return new Promise<SendOutcome>((resolve, reject) => {
        const request = connection().request(
          {
            ':method': 'POST',
            // a token is hex; whatever a client registered stays one path segment
            ':path': `/3/device/${encodeURIComponent(token)}`,
            authorization: `bearer ${providerToken()}`,
            'apns-topic': config.topic,
            'apns-push-type': 'alert',
            'apns-priority': options.urgency === 'high' ? '10' : '5',
            'apns-expiration': String(Math.floor(Date.now() / 1000) + options.ttlSeconds),
            ...(options.topic ? { 'apns-collapse-id': options.topic } : {}),
            'content-type': 'application/json',
          },
          { signal },
        )
        let status = 0
        let text = ''
        request.setEncoding('utf8')
        request.on('response', (headers) => (status = Number(headers[':status'])))
        request.on('data', (chunk: string) => (text += chunk.slice(0, 1000)))
        request.on('end', () => {
          if (status === 200) return resolve('sent')
          if (status === 410 || (status === 400 && text.includes('BadDeviceToken'))) return resolve('gone')
          if (status === 403 && text.includes('ExpiredProviderToken')) jwt = null
          ctx.log.info({ status, reason: text.slice(0, 200) }, 'APNs refused a notification')
          resolve('failed')
        })
        request.on('error', reject)
        request.end(body)
      })
    },
  }
}
