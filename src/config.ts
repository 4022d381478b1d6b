/**
 * Configuration: the only reader of environment variables (the README's configuration table).
 *
 * Every variable is optional. `loadConfig` parses them all, collects every problem and throws one
 * `ConfigError` listing each bad variable on its own line, so start-up fails with a clear message
 * instead of half-working.
 */
import { isSupportedCountry, type CountryCode } from 'libphonenumber-js/max'
import { isIP } from 'node:net'
import path from 'node:path'

export type Dialect = 'sqlite' | 'postgres'

export interface RateLimit {
  /** requests allowed per window */
  max: number
  /** window length in milliseconds */
  windowMs: number
}

export interface Config {
  /** main listener port */
  port: number
  /** main listener address */
  host: string
  /** a bearer token /metrics asks for on the main listener (METRICS_TOKEN); null: not served there unless… */
  metricsToken: string | null
  /** …a listener of its own serves /metrics (METRICS_PORT, on METRICS_HOST, default 127.0.0.1); null: none */
  metricsPort: number | null
  metricsHost: string
  /** writes (non-GET requests) per window per client IP, and per signed-in user (http/write-limit.ts) */
  writeRateLimitIp: RateLimit
  writeRateLimitUser: RateLimit
  /** frames per window one gateway socket may send; past twice that the socket is closed */
  wsFrameRateLimit: RateLimit
  /** a request slower than this many milliseconds is logged (and counted) */
  slowRequestMs: number
  /** a database query slower than this many milliseconds is logged (and counted) */
  slowQueryMs: number
  /** `{base_url}` in links (invite links, QR, referral, file URLs); no trailing slash */
  publicBaseUrl: string
  /** directory of the SQLite file and uploads */
  dataDir: string
  /** `sqlite:<path>` or `postgres://…` */
  databaseUrl: string
  dialect: Dialect
  /** enables Redis fan-out, shared rate limits and presence */
  redisUrl: string | null
  /** prefix of every Redis key and channel, so several deployments (or test runs) can share a Redis */
  redisPrefix: string
  /** sliding session lifetime in days */
  sessionTtlDays: number
  /**
   * whom to believe about the client's address in X-Forwarded-For: false (nobody: the socket's
   * peer is the client), the number of proxies in front of Tern, or their addresses
   */
  trustProxy: TrustProxy
  adminUsername: string | null
  adminPassword: string | null
  /** upload cap in bytes for everyone */
  maxUploadBytes: number
  /** upload cap in bytes for premium users */
  premiumMaxUploadBytes: number
  /** directory of uploaded files (`<DATA_DIR>/uploads`) */
  uploadDir: string
  /** seconds an unfinished chunked or tus upload is kept (chunked: since its last chunk; tus: since it began) */
  uploadSessionTtlSeconds: number
  /** seconds between sweeps that remove expired unfinished uploads */
  uploadSweepIntervalSeconds: number
  /** how long a story lives, in seconds */
  storyLifetimeSeconds: number
  /** seconds between runs of the job that removes expired stories with their media */
  storyCleanupIntervalSeconds: number
  /** a call nobody answers ends as missed after this long */
  callRingTimeoutSeconds: number
  /** the premium plans on sale (PREMIUM_PLANS), prices in kopecks */
  premiumPlans: readonly PremiumPlan[]
  /** who takes premium payments: `test` pays at once, `manual` waits for an admin to mark the order paid */
  /** null: premium purchases answer 503 payments_unavailable */
  paymentProvider: 'test' | 'manual' | null
  /** the secret payment providers sign their webhooks with (null: webhooks off) */
  paymentWebhookSecret: string | null
  /** how long before premium ends the renewal job asks for the renewal payment */
  premiumRenewBeforeSeconds: number
  /** seconds between runs of the premium renewal job */
  premiumRenewalIntervalSeconds: number
  /** an account names its inviter within this many days of being created (REFERRAL_WINDOW_DAYS) */
  referralWindowDays: number
  /** referrals one inviter may have in 30 days (REFERRAL_MONTHLY_CAP) */
  referralMonthlyCap: number
  /** the region (ISO 3166 alpha-2) of phone numbers written without a country code */
  phoneDefaultRegion: CountryCode
  /** contact imports (phone lookups) per window per client IP */
  contactImportRateLimit: RateLimit
  /** registrations per window per client IP */
  registerRateLimit: RateLimit
  /** password logins per window per client IP */
  loginRateLimit: RateLimit
  /** updates kept per user in the update log; a resume from further back gets a `reset` */
  updateLogKeep: number
  /** SQLite only: common sends take the prepared-statement fast path (messages/posting-sqlite.ts); off forces the general path */
  sendFastPath: boolean
  /** seconds between WebSocket pings: a socket that has not answered the previous one is dropped */
  wsHeartbeatSeconds: number
  /** open WebSockets one user may hold on one instance; the next is closed with 4029 */
  wsMaxSocketsPerUser: number
  /** seconds for a request's headers and ordinary body to arrive, and that an upload body may pause (http/timeouts.ts); else 408 */
  httpRequestTimeoutSeconds: number
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  /** LOG_FILE: the log is appended to this file (created 0600) instead of stdout */
  logFile: string | null
  /** allowed CORS origins; `*` allows any origin (without credentials) */
  corsOrigins: string[]
  /** the SMTP server mail goes through (`smtp://` or `smtps://`, credentials in the URL); null: mails are written to the log */
  smtpUrl: string | null
  /** the From of every mail */
  mailFrom: string
  /** seconds one mail may take to hand to the SMTP server (connect, greeting, each reply); then 503 mail_unavailable */
  mailTimeoutSeconds: number
  /**
   * the server secret two-factor secrets are encrypted with (AES-256-GCM) and short codes are
   * hashed with (HMAC); null: a random one kept in `<DATA_DIR>/secret.key`
   */
  secretKey: string | null
  /** admins must have signed in with a second factor to use admin endpoints (else 403) */
  adminRequire2fa: boolean
  /** login_v3 `email` steps (does this email have an account?) per window per client IP */
  loginLookupRateLimit: RateLimit
  /** seconds before another sign-in code may be mailed to the same address */
  loginCodeResendSeconds: number
  /** QR login codes generated per window per client IP */
  qrGenerateRateLimit: RateLimit
  /** OpenID Connect providers users may sign in with (OAUTH_PROVIDERS), by id */
  oauthProviders: readonly OAuthProvider[]
  /** wrong passwords per sign-in name, and wrong second-factor codes per account, per window, from any IP */
  loginAccountRateLimit: RateLimit
  /** allow outgoing deliveries (webhooks, Web Push endpoints) to private, loopback and link-local addresses (tests) */
  webhookAllowPrivate: boolean
  /** Bot API: messages one bot may send per window, over all chats (BOT_RATE_LIMIT, Telegram's ~30/s) */
  botRateLimit: RateLimit
  /** Bot API: messages one bot may send into one personal chat per window (BOT_CHAT_RATE_LIMIT: about 1/s, in bursts) */
  botChatRateLimit: RateLimit
  /** Bot API: messages one bot may send into one group or channel per window (BOT_GROUP_RATE_LIMIT, Telegram's 20/min) */
  botGroupRateLimit: RateLimit
  /** bot webhook URLs must be https (WEBHOOK_REQUIRE_HTTPS; on by default when NODE_ENV=production) */
  webhookRequireHttps: boolean
  /** the first retry of a failed bot webhook delivery waits about this long, doubling per attempt */
  webhookRetryBaseMs: number
  /** how long a failing bot webhook delivery is retried before it is marked failed */
  webhookRetryForSeconds: number
  /** no longer used: webhook deliveries go out when queued (jobs/queue.ts); still read so an existing setting is accepted */
  webhookDeliveryIntervalMs: number
  /** the VAPID key pair (base64url, uncompressed P-256 public key and 32-byte private key); null: generated once into `<DATA_DIR>/vapid.json` */
  vapidPublicKey: string | null
  vapidPrivateKey: string | null
  /** the VAPID `sub` claim: a mailto: or https: contact for push services */
  vapidSubject: string
  /** push subscriptions (Web Push and native tokens) one user may hold; the next registration is refused */
  pushMaxSubscriptions: number
  /** how long a queued notification gathers the messages that follow it in its chat before it goes (one push per burst) */
  pushDeliveryIntervalMs: number
  /** attempts at a notification a push service keeps failing before it is given up */
  pushMaxAttempts: number
  /** seconds one request to a push service may take */
  pushTimeoutSeconds: number
  /** a Google service-account JSON file: FCM tokens are sent through FCM's HTTP v1 API with it; null: FCM tokens are kept and skipped */
  fcmServiceAccountFile: string | null
  /** FCM's API origin (tests point it at a local stand-in) */
  fcmApiUrl: string
  /** APNs token-based auth: the .p8 key file, its key id, the team id and the app's bundle id (topic); all four or none */
  apns: { keyFile: string; keyId: string; teamId: string; topic: string } | null
  /** APNs' origin: production, or `https://api.sandbox.push.apple.com` for development builds */
  apnsUrl: string
  /** the video signaling service's listener port (VIDEO_PORT; `npm start` runs it in-process unless VIDEO_URL is set) */
  videoPort: number
  /** the video service's listener address (VIDEO_HOST, default HOST) */
  videoHost: string
  /** where the main service reaches the video service (VIDEO_URL); null: the in-process one `npm start` starts */
  videoUrl: string | null
  /** the signaling WebSocket URL handed to clients (VIDEO_PUBLIC_URL); null: derived from the video service's address */
  videoPublicUrl: string | null
  /** where the video service reports joins, leaves and media state (VIDEO_CALLBACK_URL); null: this server's own listener */
  videoCallbackUrl: string | null
  /** the secret room tickets and video-service callbacks are signed with (VIDEO_SECRET); null: a random one kept in `<DATA_DIR>/video.secret` */
  videoSecret: string | null
  /** milliseconds one request from the main service to the video service may take; then 504 upstream_timeout */
  videoTimeoutMs: number
  /** seconds a room ticket is good for (it must be presented on the signaling socket within that time) */
  videoTicketTtlSeconds: number
  /** a room nobody is in ends after this many seconds */
  videoRoomIdleSeconds: number
  // per-user caps of the video service and its reports
  /** joined signaling sockets one user may hold in one room on one video service (VIDEO_MAX_SOCKETS_PER_ROOM); the next is closed with 4029 */
  videoMaxSocketsPerRoom: number
  /** joined signaling sockets one user may hold in all rooms on one video service (VIDEO_MAX_SOCKETS_PER_USER); the next is closed with 4029 */
  videoMaxSocketsPerUser: number
  /** room tickets issued per user (VIDEO_TICKET_RATE_LIMIT, `<tickets>/<seconds>`); over it 429 rate_limited */
  videoTicketRateLimit: RateLimit
  /** `media` frames per signaling socket (VIDEO_MEDIA_RATE_LIMIT); over it an error frame `rate_limited` and the frame is dropped */
  videoMediaRateLimit: RateLimit
  /** media reports the main service records per participant of a room (VIDEO_MEDIA_REPORT_RATE_LIMIT); over it the report is answered 429 and not written */
  videoMediaReportRateLimit: RateLimit
  /** STUN servers in the ICE configuration (STUN_URLS, comma-separated `stun:` URLs) */
  stunUrls: string[]
  /** TURN servers in the ICE configuration (TURN_URLS, comma-separated `turn:`/`turns:` URLs); empty: no TURN */
  turnUrls: string[]
  /** the TURN REST API shared secret (coturn's static-auth-secret); null: TURN servers are not offered */
  turnSecret: string | null
  /** seconds TURN credentials are good for */
  turnCredentialTtlSeconds: number
  /** account lifecycle (auth/account.ts, auth/password.ts): password reset mails per window per client IP */
  passwordResetRateLimit: RateLimit
  /** …and per address (the same for addresses with and without an account) */
  passwordResetEmailRateLimit: RateLimit
  /** minutes a mailed password-reset (or account) code works */
  passwordResetCodeMinutes: number
  /** days a deleted account's username stays unavailable to others */
  accountUsernameGraceDays: number
  /** days an unconfirmed email address holds its place; then another account may take it */
  unconfirmedEmailTtlDays: number
  /** data exports per window per user */
  accountExportRateLimit: RateLimit
}

/** A premium plan: `months` of premium for `price` kopecks (shown as roubles). */
export interface PremiumPlan {
  id: string
  title: string
  months: number
  /** in kopecks (1 RUB = 100) */
  price: number
}

export const DEFAULT_PREMIUM_PLANS: PremiumPlan[] = [
  { id: 'monthly', title: 'Tern Premium, 1 month', months: 1, price: 300_00 },
  { id: 'yearly', title: 'Tern Premium, 12 months', months: 12, price: 2990_00 },
]

/**
 * PREMIUM_PLANS: a JSON list of `{id, title, months, price_rub}` (price in roubles, at most two
 * decimals). Answers the plans, or what is wrong with the text. Pure.
 */
export function parsePremiumPlans(raw: string): PremiumPlan[] | string {
  let list: unknown
  try {
    list = JSON.parse(raw)
  } catch {
    return 'must be a JSON list of {id, title, months, price_rub}'
  }
  if (!Array.isArray(list) || list.length === 0 || list.length > 20) return 'must be a JSON list of 1 to 20 plans {id, title, months, price_rub}'
  const plans: PremiumPlan[] = []
  for (const [i, item] of list.entries()) {
    const at = `plan ${i + 1}`
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return `${at} must be an object {id, title, months, price_rub}`
    const { id, title, months, price_rub: rub } = item as Record<string, unknown>
    if (typeof id !== 'string' || !/^[a-z0-9_-]{1,32}$/.test(id)) return `${at}: id must be 1 to 32 of a-z, 0-9, _ and -`
    if (plans.some((plan) => plan.id === id)) return `${at}: id ${id} is there twice`
    if (typeof title !== 'string' || title.trim() === '' || title.length > 64) return `${at}: title must be 1 to 64 characters`
    if (typeof months !== 'number' || !Number.isInteger(months) || months < 1 || months > 120) return `${at}: months must be an integer from 1 to 120`
    if (typeof rub !== 'number' || !Number.isFinite(rub) || rub <= 0 || rub > 10_000_000) return `${at}: price_rub must be a positive number of roubles`
    const price = Math.round(rub * 100)
    if (Math.abs(price - rub * 100) > 1e-6) return `${at}: price_rub has at most two decimals (kopecks)`
    plans.push({ id, title: title.trim(), months, price })
  }
  return plans
}

/** An OpenID Connect provider: `POST V2/auth/oauth/<id>` signs in with it. */
export interface OAuthProvider {
  /** the path segment and the session method `oauth:<id>`: 1 to 32 of a-z, 0-9, _ and - */
  id: string
  /** the issuer URL (discovery at `<issuer>/.well-known/openid-configuration`) */
  issuer: string
  clientId: string
  clientSecret: string
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * OAUTH_PROVIDERS: a JSON list `[{id, issuer, client_id, client_secret}]` (or DESIGN §8's object
 * `{"<id>": {issuer, client_id, client_secret}}`). Answers the providers, or what is wrong — never
 * echoing a secret. The issuer must be https (http only on a loopback address, for tests). Pure.
 */
export function parseOAuthProviders(raw: string): OAuthProvider[] | string {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return 'must be JSON: a list of {id, issuer, client_id, client_secret}'
  }
  let entries: unknown[]
  if (Array.isArray(parsed)) entries = parsed
  else if (typeof parsed === 'object' && parsed !== null) {
    entries = Object.entries(parsed).map(([id, value]) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value, id } : value))
  } else return 'must be a JSON list of {id, issuer, client_id, client_secret}'
  if (entries.length > 20) return 'at most 20 providers'
  const providers: OAuthProvider[] = []
  for (const [i, item] of entries.entries()) {
    const at = `provider ${i + 1}`
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return `${at} must be an object {id, issuer, client_id, client_secret}`
    const { id, issuer, client_id: clientId, client_secret: clientSecret } = item as Record<string, unknown>
    if (typeof id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,31}$/.test(id)) return `${at}: id must be 1 to 32 of a-z, 0-9, _ and - (it is a path segment)`
    if (providers.some((p) => p.id === id)) return `${at}: id ${id} is there twice`
    let url: URL
    try {
      url = new URL(String(issuer))
    } catch {
      return `${at} (${id}): issuer must be a URL`
    }
    if (typeof issuer !== 'string' || !(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) || url.search || url.hash) {
      return `${at} (${id}): issuer must be an https URL without query (http only on a loopback address)`
    }
    if (typeof clientId !== 'string' || clientId === '' || clientId.length > 256) return `${at} (${id}): client_id must be a string of 1 to 256 characters`
    if (typeof clientSecret !== 'string' || clientSecret === '' || clientSecret.length > 1024) return `${at} (${id}): client_secret must be a string of 1 to 1024 characters`
    providers.push({ id, issuer, clientId, clientSecret })
  }
  return providers
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'))
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

export type TrustProxy = false | number | string[]

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/**
 * Where this server is reached when PUBLIC_BASE_URL is not set: its own listener, with a wildcard
 * host (every interface) named as localhost. With PORT=0 the real port is known only once it
 * listens: links then need PUBLIC_BASE_URL.
 */
function defaultBaseUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' || host === '[::]' ? 'localhost' : host
  return `http://${isIP(name) === 6 ? `[${name}]` : name}:${port}`
}

/** Parses and validates the environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = []
  const read = (name: string): string | undefined => {
    const value = env[name]
    return value === undefined || value.trim() === '' ? undefined : value.trim()
  }
  const fail = (name: string, why: string): undefined => {
    problems.push(`${name}: ${why} (got ${JSON.stringify(env[name])})`)
    return undefined
  }

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name)
    if (raw === undefined) return fallback
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      fail(name, `must be an integer from ${min} to ${max}`)
      return fallback
    }
    return Number(raw)
  }
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = read(name)?.toLowerCase()
    if (raw === undefined) return fallback
    if (['true', '1', 'yes', 'on'].includes(raw)) return true
    if (['false', '0', 'no', 'off'].includes(raw)) return false
    fail(name, 'must be true or false')
    return fallback
  }
  /** false, a hop count, or the trusted proxies' addresses / CIDR ranges (never "trust everyone") */
  const proxies = (name: string): TrustProxy => {
    const raw = read(name)
    if (raw === undefined || ['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false
    if (/^\d+$/.test(raw)) return Number(raw) <= 32 ? Number(raw) : (fail(name, 'a hop count must be from 0 to 32'), false)
    const list = raw.split(',').map((item) => item.trim()).filter(Boolean)
    const isAddress = (item: string) => {
      const [address, prefix, ...rest] = item.split('/')
      const family = isIP(address)
      if (!family || rest.length) return false
      return prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
    }
    if (list.length === 0 || !list.every(isAddress)) {
      fail(name, 'must be the number of proxies in front of Tern (e.g. 1) or their addresses and CIDR ranges (e.g. 10.0.0.1,10.1.0.0/16); "true" would let any client pick its own address through X-Forwarded-For')
      return false
    }
    return list
  }
  const url = (name: string, fallback: string, protocols: string[]): string => {
    const raw = read(name) ?? fallback
    try {
      const parsed = new URL(raw)
      if (!protocols.includes(parsed.protocol)) {
        fail(name, `must be a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL`)
      }
    } catch {
      fail(name, 'must be a URL')
    }
    return raw.replace(/\/+$/, '')
  }
  const optionalUrl = (name: string, protocols: string[]): string | null =>
    read(name) === undefined ? null : url(name, '', protocols)
  const rate = (name: string, fallback: string): RateLimit => {
    const raw = read(name) ?? fallback
    const match = /^(\d+)\s*\/\s*(\d+)$/.exec(raw)
    if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) {
      fail(name, 'must look like <requests>/<seconds>, e.g. 5/300')
      return { max: 5, windowMs: 300_000 }
    }
    return { max: Number(match[1]), windowMs: Number(match[2]) * 1000 }
  }
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = read(name)
    if (raw === undefined) return fallback
    if ((allowed as readonly string[]).includes(raw)) return raw as T
    fail(name, `must be one of ${allowed.join(', ')}`)
    return fallback
  }
  const plans = (name: string): PremiumPlan[] => {
    const raw = read(name)
    if (raw === undefined) return DEFAULT_PREMIUM_PLANS
    const parsed = parsePremiumPlans(raw)
    if (typeof parsed === 'string') {
      fail(name, parsed)
      return DEFAULT_PREMIUM_PLANS
    }
    return parsed
  }
  const region = (name: string, fallback: CountryCode): CountryCode => {
    const raw = (read(name) ?? fallback).toUpperCase()
    if (isSupportedCountry(raw)) return raw
    fail(name, 'must be a two-letter region code, e.g. RU, US or DE')
    return fallback
  }
  const secretKey = (): string | null => {
    const raw = env.SECRET_KEY
    if (raw === undefined || raw === '') return null
    if (raw.length < 32) {
      // the value itself is a secret: never echoed
      problems.push('SECRET_KEY: must be at least 32 characters (e.g. `openssl rand -base64 48`)')
      return null
    }
    return raw
  }
  /** both VAPID keys or neither; the private key is never echoed */
  const vapidKeys = (): Pick<Config, 'vapidPublicKey' | 'vapidPrivateKey'> => {
    const publicKey = read('VAPID_PUBLIC_KEY')
    const privateKey = env.VAPID_PRIVATE_KEY?.trim() || undefined
    if (publicKey === undefined && privateKey === undefined) return { vapidPublicKey: null, vapidPrivateKey: null }
    if (publicKey === undefined || privateKey === undefined) {
      problems.push('VAPID_PUBLIC_KEY/VAPID_PRIVATE_KEY: set both or neither')
    } else if (!/^[A-Za-z0-9_-]+$/.test(publicKey) || Buffer.from(publicKey, 'base64url').length !== 65 || Buffer.from(publicKey, 'base64url')[0] !== 4) {
      fail('VAPID_PUBLIC_KEY', 'must be an uncompressed P-256 public key, base64url (65 bytes)')
    } else if (!/^[A-Za-z0-9_-]+$/.test(privateKey) || Buffer.from(privateKey, 'base64url').length !== 32) {
      problems.push('VAPID_PRIVATE_KEY: must be a P-256 private key, base64url (32 bytes)')
    } else return { vapidPublicKey: publicKey, vapidPrivateKey: privateKey }
    return { vapidPublicKey: null, vapidPrivateKey: null }
  }
  const vapidSubject = (): string => {
    const raw = read('VAPID_SUBJECT')
    if (raw === undefined) {
      let host = 'localhost'
      try {
        host = new URL(read('PUBLIC_BASE_URL') ?? 'http://localhost').hostname.replace(/^\[|\]$/g, '') || 'localhost'
      } catch {
        // PUBLIC_BASE_URL's own check reports it
      }
      return `mailto:admin@${host}`
    }
    if (!/^mailto:[^\s@]+@[^\s@]+$/.test(raw) && !/^https:\/\/[^\s]+$/.test(raw)) fail('VAPID_SUBJECT', 'must be a mailto: address or an https: URL')
    return raw
  }
  const oauthProviders = (): OAuthProvider[] => {
    const raw = read('OAUTH_PROVIDERS')
    if (raw === undefined) return []
    const parsed = parseOAuthProviders(raw)
    if (typeof parsed === 'string') {
      // the value holds client secrets: never echoed
      problems.push(`OAUTH_PROVIDERS: ${parsed}`)
      return []
    }
    return parsed
  }
  const apnsConfig = (): Config['apns'] => {
    const [keyFile, keyId, teamId, topic] = ['APNS_KEY_FILE', 'APNS_KEY_ID', 'APNS_TEAM_ID', 'APNS_TOPIC'].map(read)
    const given = [keyFile, keyId, teamId, topic].filter((v) => v !== undefined).length
    if (given === 0) return null
    if (given < 4) {
      problems.push('APNS_KEY_FILE/APNS_KEY_ID/APNS_TEAM_ID/APNS_TOPIC: set all four or none')
      return null
    }
    return { keyFile: path.resolve(keyFile!), keyId: keyId!, teamId: teamId!, topic: topic! }
  }
  const videoSecret = (): string | null => {
    const raw = env.VIDEO_SECRET
    if (raw === undefined || raw === '') return null
    // the value itself is a secret: never echoed
    if (raw.length < 32) problems.push('VIDEO_SECRET: must be at least 32 characters (e.g. `openssl rand -base64 48`)')
    return raw
  }
  /** comma-separated ICE server URLs of the given schemes (`stun:host:port`, `turn:host:port?transport=udp`) */
  const iceUrls = (name: string, schemes: string[], fallback: string): string[] => {
    const list = (read(name) ?? fallback).split(',').map((item) => item.trim()).filter(Boolean)
    if (list.length > 20 || !list.every((item) => item.length <= 256 && schemes.some((s) => item.startsWith(s)) && /^[a-z]+:[A-Za-z0-9.\-[\]:]+(\?transport=(udp|tcp))?$/.test(item))) {
      fail(name, `must be a comma-separated list of ${schemes.join(' or ')} URLs, e.g. ${schemes[0]}host:3478`)
      return []
    }
    return list
  }
  const dataDir = path.resolve(read('DATA_DIR') ?? './data')
  const databaseUrl = read('DATABASE_URL') ?? `sqlite:${path.join(dataDir, 'tern.db')}`
  let dialect: Dialect = 'sqlite'
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) dialect = 'postgres'
  else if (!databaseUrl.startsWith('sqlite:') || databaseUrl.length === 'sqlite:'.length) {
    fail('DATABASE_URL', 'must be sqlite:<path> or postgres://…')
  }

  const logLevel = (read('LOG_LEVEL') ?? 'info') as Config['logLevel']
  if (!LOG_LEVELS.includes(logLevel)) fail('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`)

  // no provider unless one is chosen: `test` pays every order at once, so never in production
  const paymentProvider = read('PAYMENT_PROVIDER') === undefined ? null : oneOf('PAYMENT_PROVIDER', ['test', 'manual'] as const, 'manual')
  if (paymentProvider === 'test' && read('NODE_ENV') === 'production') {
    problems.push('PAYMENT_PROVIDER: test pays every order at once without taking money, and is refused with NODE_ENV=production')
  }

  const adminUsername = read('ADMIN_USERNAME') ?? null
  const adminPassword = env.ADMIN_PASSWORD ?? null
  if ((adminUsername === null) !== (adminPassword === null || adminPassword === '')) {
    problems.push('ADMIN_USERNAME/ADMIN_PASSWORD: set both or neither')
  } else if (adminPassword !== null && adminPassword.length < 8) {
    problems.push('ADMIN_PASSWORD: must be at least 8 characters')
  }
  if (adminUsername !== null && !/^[A-Za-z0-9_]{3,32}$/.test(adminUsername)) {
    fail('ADMIN_USERNAME', 'must be 3 to 32 characters: letters, digits and underscores')
  }

  const port = int('PORT', 3000, 0, 65535)
  const host = read('HOST') ?? '127.0.0.1'
  const config: Config = {
    port,
    host,
    metricsToken: read('METRICS_TOKEN') ?? null,
    metricsPort: read('METRICS_PORT') === undefined ? null : int('METRICS_PORT', 9464, 0, 65535),
    metricsHost: read('METRICS_HOST') ?? '127.0.0.1',
    slowRequestMs: int('SLOW_REQUEST_MS', 1000, 1, 3_600_000),
    writeRateLimitIp: rate('WRITE_RATE_LIMIT_IP', '3000/60'),
    writeRateLimitUser: rate('WRITE_RATE_LIMIT_USER', '600/60'),
    wsFrameRateLimit: rate('WS_FRAME_RATE_LIMIT', '50/1'),
    slowQueryMs: int('SLOW_QUERY_MS', 250, 1, 3_600_000),
    publicBaseUrl: url('PUBLIC_BASE_URL', defaultBaseUrl(host, port), ['http:', 'https:']),
    dataDir,
    databaseUrl,
    dialect,
    redisUrl: optionalUrl('REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: read('REDIS_PREFIX') ?? 'tern:',
    sessionTtlDays: int('SESSION_TTL_DAYS', 30, 1, 3650),
    trustProxy: proxies('TRUST_PROXY'),
    adminUsername,
    adminPassword: adminPassword || null,
    maxUploadBytes: int('MAX_UPLOAD_BYTES', 52_428_800, 1, Number.MAX_SAFE_INTEGER),
    premiumMaxUploadBytes: int('PREMIUM_MAX_UPLOAD_BYTES', 2_147_483_648, 1, Number.MAX_SAFE_INTEGER),
    uploadDir: path.join(dataDir, 'uploads'),
    uploadSessionTtlSeconds: int('UPLOAD_SESSION_TTL_SECONDS', 86_400, 1, 30 * 86_400),
    uploadSweepIntervalSeconds: int('UPLOAD_SWEEP_INTERVAL_SECONDS', 600, 1, 86_400),
    storyLifetimeSeconds: int('STORY_LIFETIME_SECONDS', 86_400, 1, 30 * 86_400),
    storyCleanupIntervalSeconds: int('STORY_CLEANUP_INTERVAL_SECONDS', 1800, 1, 86_400),
    callRingTimeoutSeconds: int('CALL_RING_TIMEOUT_SECONDS', 60, 5, 600),
    premiumPlans: plans('PREMIUM_PLANS'),
    paymentProvider,
    paymentWebhookSecret: read('PAYMENT_WEBHOOK_SECRET') ?? null,
    premiumRenewBeforeSeconds: int('PREMIUM_RENEW_BEFORE_SECONDS', 86_400, 0, 30 * 86_400),
    premiumRenewalIntervalSeconds: int('PREMIUM_RENEWAL_INTERVAL_SECONDS', 3600, 1, 86_400),
    referralWindowDays: int('REFERRAL_WINDOW_DAYS', 7, 1, 365),
    referralMonthlyCap: int('REFERRAL_MONTHLY_CAP', 20, 0, 100_000),
    phoneDefaultRegion: region('PHONE_DEFAULT_REGION', 'RU'),
    contactImportRateLimit: rate('CONTACT_IMPORT_RATE_LIMIT', '30/3600'),
    registerRateLimit: rate('REGISTER_RATE_LIMIT', '5/300'),
    loginRateLimit: rate('LOGIN_RATE_LIMIT', '30/60'),
    updateLogKeep: int('UPDATE_LOG_KEEP', 10_000, 10, 100_000_000),
    sendFastPath: bool('SEND_FAST_PATH', true),
    wsHeartbeatSeconds: int('WS_HEARTBEAT_SECONDS', 30, 1, 3600),
    wsMaxSocketsPerUser: int('WS_MAX_SOCKETS_PER_USER', 100, 1, 10_000),
    httpRequestTimeoutSeconds: int('HTTP_REQUEST_TIMEOUT_SECONDS', 30, 1, 86_400),
    logLevel,
    logFile: read('LOG_FILE') === undefined ? null : path.resolve(read('LOG_FILE')!),
    corsOrigins: (read('CORS_ORIGINS') ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    smtpUrl: optionalUrl('SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: read('MAIL_FROM') ?? 'Tern <no-reply@localhost>',
    mailTimeoutSeconds: int('MAIL_TIMEOUT_SECONDS', 5, 1, 60),
    secretKey: secretKey(),
    adminRequire2fa: bool('ADMIN_REQUIRE_2FA', false),
    loginLookupRateLimit: rate('LOGIN_LOOKUP_RATE_LIMIT', '10/60'),
    loginCodeResendSeconds: int('LOGIN_CODE_RESEND_SECONDS', 60, 1, 3600),
    qrGenerateRateLimit: rate('QR_GENERATE_RATE_LIMIT', '10/60'),
    oauthProviders: oauthProviders(),
    loginAccountRateLimit: rate('LOGIN_ACCOUNT_RATE_LIMIT', '10/900'),
    webhookAllowPrivate: bool('WEBHOOK_ALLOW_PRIVATE', false),
    botRateLimit: rate('BOT_RATE_LIMIT', '30/1'),
    botChatRateLimit: rate('BOT_CHAT_RATE_LIMIT', '5/5'),
    botGroupRateLimit: rate('BOT_GROUP_RATE_LIMIT', '20/60'),
    webhookRequireHttps: bool('WEBHOOK_REQUIRE_HTTPS', read('NODE_ENV') === 'production'),
    webhookRetryBaseMs: int('WEBHOOK_RETRY_BASE_MS', 5000, 1, 3_600_000),
    webhookRetryForSeconds: int('WEBHOOK_RETRY_FOR_SECONDS', 86_400, 1, 30 * 86_400),
    webhookDeliveryIntervalMs: int('WEBHOOK_DELIVERY_INTERVAL_MS', 250, 10, 3_600_000),
    ...vapidKeys(),
    vapidSubject: vapidSubject(),
    pushMaxSubscriptions: int('PUSH_MAX_SUBSCRIPTIONS', 20, 1, 1000),
    pushDeliveryIntervalMs: int('PUSH_DELIVERY_INTERVAL_MS', 1000, 50, 3_600_000),
    pushMaxAttempts: int('PUSH_MAX_ATTEMPTS', 5, 1, 50),
    pushTimeoutSeconds: int('PUSH_TIMEOUT_SECONDS', 5, 1, 60),
    fcmServiceAccountFile: read('FCM_SERVICE_ACCOUNT_FILE') ? path.resolve(read('FCM_SERVICE_ACCOUNT_FILE')!) : null,
    fcmApiUrl: url('FCM_API_URL', 'https://fcm.googleapis.com', ['https:', 'http:']),
    apns: apnsConfig(),
    apnsUrl: url('APNS_URL', 'https://api.push.apple.com', ['https:', 'http:']),
    videoPort: int('VIDEO_PORT', 5001, 0, 65535),
    videoHost: read('VIDEO_HOST') ?? host,
    videoUrl: optionalUrl('VIDEO_URL', ['http:', 'https:']),
    videoPublicUrl: optionalUrl('VIDEO_PUBLIC_URL', ['ws:', 'wss:']),
    videoCallbackUrl: optionalUrl('VIDEO_CALLBACK_URL', ['http:', 'https:']),
    videoSecret: videoSecret(),
    videoTimeoutMs: int('VIDEO_TIMEOUT_MS', 5000, 10, 60_000),
    videoTicketTtlSeconds: int('VIDEO_TICKET_TTL_SECONDS', 60, 5, 3600),
    videoRoomIdleSeconds: int('VIDEO_ROOM_IDLE_SECONDS', 600, 5, 7 * 86_400),
    videoMaxSocketsPerRoom: int('VIDEO_MAX_SOCKETS_PER_ROOM', 4, 1, 1000),
    videoMaxSocketsPerUser: int('VIDEO_MAX_SOCKETS_PER_USER', 16, 1, 10_000),
    videoTicketRateLimit: rate('VIDEO_TICKET_RATE_LIMIT', '30/60'),
    videoMediaRateLimit: rate('VIDEO_MEDIA_RATE_LIMIT', '10/1'),
    videoMediaReportRateLimit: rate('VIDEO_MEDIA_REPORT_RATE_LIMIT', '5/1'),
    stunUrls: iceUrls('STUN_URLS', ['stun:'], 'stun:stun.l.google.com:19302'),
    turnUrls: iceUrls('TURN_URLS', ['turn:', 'turns:'], ''),
    turnSecret: env.TURN_SECRET?.trim() || null,
    turnCredentialTtlSeconds: int('TURN_CREDENTIAL_TTL_SECONDS', 86_400, 60, 7 * 86_400),
    passwordResetRateLimit: rate('PASSWORD_RESET_RATE_LIMIT', '5/900'),
    passwordResetEmailRateLimit: rate('PASSWORD_RESET_EMAIL_RATE_LIMIT', '3/3600'),
    passwordResetCodeMinutes: int('PASSWORD_RESET_CODE_MINUTES', 15, 1, 1440),
    accountUsernameGraceDays: int('ACCOUNT_USERNAME_GRACE_DAYS', 30, 0, 3650),
    unconfirmedEmailTtlDays: int('UNCONFIRMED_EMAIL_TTL_DAYS', 7, 1, 3650),
    accountExportRateLimit: rate('ACCOUNT_EXPORT_RATE_LIMIT', '1/60'),
  }

  if (problems.length > 0) throw new ConfigError(problems)
  return Object.freeze(config)
}

/** The SQLite file path of a `sqlite:` URL. */
export function sqlitePath(databaseUrl: string): string {
  return path.resolve(databaseUrl.slice('sqlite:'.length))
}
