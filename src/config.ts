/**
 * Configuration: the only reader of environment variables.
 *
 * Every variable is declared once, in SECTIONS below: its name, its type, its default, a one-line
 * description and how it is parsed and checked. `loadConfig` runs that table; tools/config-doc.ts
 * renders it as docs/configuration.md (`npm run docs:config`), so the two cannot disagree.
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

/** The parsed configuration. Each field names the variable it comes from; SECTIONS says what it means. */
export interface Config {
  /** PORT */
  port: number
  /** HOST */
  host: string
  /** METRICS_TOKEN */
  metricsToken: string | null
  /** METRICS_PORT; null: no listener of its own */
  metricsPort: number | null
  /** METRICS_HOST */
  metricsHost: string
  /** WRITE_RATE_LIMIT_IP */
  writeRateLimitIp: RateLimit
  /** WRITE_RATE_LIMIT_USER */
  writeRateLimitUser: RateLimit
  /** WS_FRAME_RATE_LIMIT */
  wsFrameRateLimit: RateLimit
  /** SLOW_REQUEST_MS */
  slowRequestMs: number
  /** SLOW_QUERY_MS */
  slowQueryMs: number
  /** PUBLIC_BASE_URL, without a trailing slash */
  publicBaseUrl: string
  /** DATA_DIR, absolute */
  dataDir: string
  /** DATABASE_URL */
  databaseUrl: string
  /** from DATABASE_URL */
  dialect: Dialect
  /** REDIS_URL */
  redisUrl: string | null
  /** REDIS_PREFIX */
  redisPrefix: string
  /** SESSION_TTL_DAYS */
  sessionTtlDays: number
  /** TRUST_PROXY */
  trustProxy: TrustProxy
  /** ADMIN_USERNAME */
  adminUsername: string | null
  /** ADMIN_PASSWORD */
  adminPassword: string | null
  /** MAX_UPLOAD_BYTES */
  maxUploadBytes: number
  /** PREMIUM_MAX_UPLOAD_BYTES */
  premiumMaxUploadBytes: number
  /** `<DATA_DIR>/uploads`: where uploaded files are kept */
  uploadDir: string
  /** UPLOAD_SESSION_TTL_SECONDS */
  uploadSessionTtlSeconds: number
  /** UPLOAD_SWEEP_INTERVAL_SECONDS */
  uploadSweepIntervalSeconds: number
  /** STORY_LIFETIME_SECONDS */
  storyLifetimeSeconds: number
  /** STORY_CLEANUP_INTERVAL_SECONDS */
  storyCleanupIntervalSeconds: number
  /** CALL_RING_TIMEOUT_SECONDS */
  callRingTimeoutSeconds: number
  /** PREMIUM_PLANS, prices in kopecks */
  premiumPlans: readonly PremiumPlan[]
  /** PAYMENT_PROVIDER; null: premium purchases answer 503 payments_unavailable */
  paymentProvider: 'test' | 'manual' | null
  /** PAYMENT_WEBHOOK_SECRET */
  paymentWebhookSecret: string | null
  /** PREMIUM_RENEW_BEFORE_SECONDS */
  premiumRenewBeforeSeconds: number
  /** PREMIUM_RENEWAL_INTERVAL_SECONDS */
  premiumRenewalIntervalSeconds: number
  /** REFERRAL_WINDOW_DAYS */
  referralWindowDays: number
  /** REFERRAL_MONTHLY_CAP */
  referralMonthlyCap: number
  /** PHONE_DEFAULT_REGION */
  phoneDefaultRegion: CountryCode
  /** CONTACT_IMPORT_RATE_LIMIT */
  contactImportRateLimit: RateLimit
  /** REGISTER_RATE_LIMIT */
  registerRateLimit: RateLimit
  /** LOGIN_RATE_LIMIT */
  loginRateLimit: RateLimit
  /** UPDATE_LOG_KEEP */
  updateLogKeep: number
  /** SEND_FAST_PATH */
  sendFastPath: boolean
  /** WS_HEARTBEAT_SECONDS */
  wsHeartbeatSeconds: number
  /** WS_MAX_SOCKETS_PER_USER */
  wsMaxSocketsPerUser: number
  /** HTTP_REQUEST_TIMEOUT_SECONDS */
  httpRequestTimeoutSeconds: number
  /** LOG_LEVEL */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  /** LOG_FILE, absolute; null: stdout */
  logFile: string | null
  /** CORS_ORIGINS */
  corsOrigins: string[]
  /** SMTP_URL; null: mails are written to the log */
  smtpUrl: string | null
  /** MAIL_FROM */
  mailFrom: string
  /** MAIL_TIMEOUT_SECONDS */
  mailTimeoutSeconds: number
  /** SECRET_KEY; null: a random one kept in `<DATA_DIR>/secret.key` */
  secretKey: string | null
  /** ADMIN_REQUIRE_2FA */
  adminRequire2fa: boolean
  /** LOGIN_LOOKUP_RATE_LIMIT */
  loginLookupRateLimit: RateLimit
  /** LOGIN_CODE_RESEND_SECONDS */
  loginCodeResendSeconds: number
  /** QR_GENERATE_RATE_LIMIT */
  qrGenerateRateLimit: RateLimit
  /** OAUTH_PROVIDERS */
  oauthProviders: readonly OAuthProvider[]
  /** LOGIN_ACCOUNT_RATE_LIMIT */
  loginAccountRateLimit: RateLimit
  /** WEBHOOK_ALLOW_PRIVATE */
  webhookAllowPrivate: boolean
  /** BOT_RATE_LIMIT */
  botRateLimit: RateLimit
  /** BOT_CHAT_RATE_LIMIT */
  botChatRateLimit: RateLimit
  /** BOT_GROUP_RATE_LIMIT */
  botGroupRateLimit: RateLimit
  /** WEBHOOK_REQUIRE_HTTPS */
  webhookRequireHttps: boolean
  /** WEBHOOK_RETRY_BASE_MS */
  webhookRetryBaseMs: number
  /** WEBHOOK_RETRY_FOR_SECONDS */
  webhookRetryForSeconds: number
  /** WEBHOOK_DELIVERY_INTERVAL_MS */
  webhookDeliveryIntervalMs: number
  /** VAPID_PUBLIC_KEY; null (with the private key): generated once into `<DATA_DIR>/vapid.json` */
  vapidPublicKey: string | null
  /** VAPID_PRIVATE_KEY */
  vapidPrivateKey: string | null
  /** VAPID_SUBJECT */
  vapidSubject: string
  /** PUSH_MAX_SUBSCRIPTIONS */
  pushMaxSubscriptions: number
  /** PUSH_DELIVERY_INTERVAL_MS */
  pushDeliveryIntervalMs: number
  /** PUSH_MAX_ATTEMPTS */
  pushMaxAttempts: number
  /** PUSH_TIMEOUT_SECONDS */
  pushTimeoutSeconds: number
  /** FCM_SERVICE_ACCOUNT_FILE, absolute; null: FCM tokens are kept and skipped */
  fcmServiceAccountFile: string | null
  /** FCM_API_URL */
  fcmApiUrl: string
  /** APNS_KEY_FILE (absolute), APNS_KEY_ID, APNS_TEAM_ID and APNS_TOPIC; null: none of them set */
  apns: { keyFile: string; keyId: string; teamId: string; topic: string } | null
  /** APNS_URL */
  apnsUrl: string
  /** VIDEO_PORT */
  videoPort: number
  /** VIDEO_HOST */
  videoHost: string
  /** VIDEO_URL; null: the in-process video service `npm start` starts */
  videoUrl: string | null
  /** VIDEO_PUBLIC_URL; null: derived from the video service's address */
  videoPublicUrl: string | null
  /** VIDEO_CALLBACK_URL; null: this server's own listener */
  videoCallbackUrl: string | null
  /** VIDEO_SECRET; null: a random one kept in `<DATA_DIR>/video.secret` */
  videoSecret: string | null
  /** VIDEO_TIMEOUT_MS */
  videoTimeoutMs: number
  /** VIDEO_TICKET_TTL_SECONDS */
  videoTicketTtlSeconds: number
  /** VIDEO_ROOM_IDLE_SECONDS */
  videoRoomIdleSeconds: number
  /** VIDEO_MAX_SOCKETS_PER_ROOM */
  videoMaxSocketsPerRoom: number
  /** VIDEO_MAX_SOCKETS_PER_USER */
  videoMaxSocketsPerUser: number
  /** VIDEO_TICKET_RATE_LIMIT */
  videoTicketRateLimit: RateLimit
  /** VIDEO_MEDIA_RATE_LIMIT */
  videoMediaRateLimit: RateLimit
  /** VIDEO_MEDIA_REPORT_RATE_LIMIT */
  videoMediaReportRateLimit: RateLimit
  /** STUN_URLS */
  stunUrls: string[]
  /** TURN_URLS */
  turnUrls: string[]
  /** TURN_SECRET; null: TURN servers are not offered */
  turnSecret: string | null
  /** TURN_CREDENTIAL_TTL_SECONDS */
  turnCredentialTtlSeconds: number
  /** PASSWORD_RESET_RATE_LIMIT */
  passwordResetRateLimit: RateLimit
  /** PASSWORD_RESET_EMAIL_RATE_LIMIT */
  passwordResetEmailRateLimit: RateLimit
  /** PASSWORD_RESET_CODE_MINUTES */
  passwordResetCodeMinutes: number
  /** ACCOUNT_USERNAME_GRACE_DAYS */
  accountUsernameGraceDays: number
  /** UNCONFIRMED_EMAIL_TTL_DAYS */
  unconfirmedEmailTtlDays: number
  /** ACCOUNT_EXPORT_RATE_LIMIT */
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
  if (!Array.isArray(list) || list.length === 0 || list.length > 20)
    return 'must be a JSON list of 1 to 20 plans {id, title, months, price_rub}'
  const plans: PremiumPlan[] = []
  for (const [i, item] of list.entries()) {
    const at = `plan ${i + 1}`
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return `${at} must be an object {id, title, months, price_rub}`
    const { id, title, months, price_rub: rub } = item as Record<string, unknown>
    if (typeof id !== 'string' || !/^[a-z0-9_-]{1,32}$/.test(id)) return `${at}: id must be 1 to 32 of a-z, 0-9, _ and -`
    if (plans.some((plan) => plan.id === id)) return `${at}: id ${id} is there twice`
    if (typeof title !== 'string' || title.trim() === '' || title.length > 64) return `${at}: title must be 1 to 64 characters`
    if (typeof months !== 'number' || !Number.isInteger(months) || months < 1 || months > 120)
      return `${at}: months must be an integer from 1 to 120`
    if (typeof rub !== 'number' || !Number.isFinite(rub) || rub <= 0 || rub > 10_000_000)
      return `${at}: price_rub must be a positive number of roubles`
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
 * OAUTH_PROVIDERS: a JSON list `[{id, issuer, client_id, client_secret}]`, or an object
 * keyed by id `{"<id>": {issuer, client_id, client_secret}}`. Answers the providers, or what is wrong — never
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
    entries = Object.entries(parsed).map(([id, value]) =>
      typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value, id } : value,
    )
  } else return 'must be a JSON list of {id, issuer, client_id, client_secret}'
  if (entries.length > 20) return 'at most 20 providers'
  const providers: OAuthProvider[] = []
  for (const [i, item] of entries.entries()) {
    const at = `provider ${i + 1}`
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      return `${at} must be an object {id, issuer, client_id, client_secret}`
    const { id, issuer, client_id: clientId, client_secret: clientSecret } = item as Record<string, unknown>
    if (typeof id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,31}$/.test(id))
      return `${at}: id must be 1 to 32 of a-z, 0-9, _ and - (it is a path segment)`
    if (providers.some((p) => p.id === id)) return `${at}: id ${id} is there twice`
    let url: URL
    try {
      url = new URL(String(issuer))
    } catch {
      return `${at} (${id}): issuer must be a URL`
    }
    if (
      typeof issuer !== 'string' ||
      !(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) ||
      url.search ||
      url.hash
    ) {
      return `${at} (${id}): issuer must be an https URL without query (http only on a loopback address)`
    }
    if (typeof clientId !== 'string' || clientId === '' || clientId.length > 256)
      return `${at} (${id}): client_id must be a string of 1 to 256 characters`
    if (typeof clientSecret !== 'string' || clientSecret === '' || clientSecret.length > 1024)
      return `${at} (${id}): client_secret must be a string of 1 to 1024 characters`
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

// ---------------------------------------------------------------------------------------------
// The table's machinery

/** What a variable's parser is given while `loadConfig` runs the table. */
export interface Reading {
  /** this variable, trimmed; undefined when unset or blank */
  raw: string | undefined
  /** this variable exactly as given (secrets are taken untrimmed) */
  given: string | undefined
  /** another variable, trimmed; undefined when unset or blank */
  read(name: string): string | undefined
  /** another variable exactly as given */
  env(name: string): string | undefined
  /** the value of a variable above this one in the table */
  value<K extends keyof Config>(key: K): Config[K]
  /** this variable is bad: `NAME: why (got "value")` */
  fail(why: string): void
  /** this variable is bad, and its value a secret that is never echoed: `NAME: why` */
  refuse(why: string): void
  /** a problem between several variables, said in full */
  report(problem: string): void
}

/** A kind of value: how it reads in the documentation, and how it is parsed. */
interface Kind<T> {
  type: string
  default: string
  parse: (reading: Reading) => T
}

/** One environment variable. */
export interface Variable<K extends keyof Config | null = keyof Config | null> {
  name: string
  /** the Config field it sets; null: another variable's parser reads it */
  key: K
  /** its type, as the documentation shows it */
  type: string
  /** its default, as the documentation shows it (Markdown) */
  default: string
  /** what it does, in one line (Markdown) */
  description: string
  parse: (reading: Reading) => K extends keyof Config ? Config[K] : void
}

export interface Section {
  title: string
  variables: readonly Variable[]
}

const code = (text: string | number) => `\`${text}\``

function variable<K extends keyof Config>(name: string, key: K, kind: Kind<Config[K]>, description: string): Variable<K> {
  return { name, key, type: kind.type, default: kind.default, description, parse: kind.parse as Variable<K>['parse'] }
}

function parseInteger(reading: Reading, min: number, max: number, fallback: number): number {
  const raw = reading.raw
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    reading.fail(`must be an integer from ${min} to ${max}`)
    return fallback
  }
  return Number(raw)
}

const integerType = (min: number, max: number) => (max === Number.MAX_SAFE_INTEGER ? `integer ≥ ${min}` : `integer ${min}–${max}`)

const integer = (min: number, max: number, fallback: number): Kind<number> => ({
  type: integerType(min, max),
  default: code(fallback),
  parse: (reading) => parseInteger(reading, min, max, fallback),
})

const optionalInteger = (min: number, max: number): Kind<number | null> => ({
  type: integerType(min, max),
  default: 'unset',
  parse: (reading) => (reading.raw === undefined ? null : parseInteger(reading, min, max, min)),
})

function parseFlag(reading: Reading, fallback: boolean): boolean {
  const raw = reading.raw?.toLowerCase()
  if (raw === undefined) return fallback
  if (['true', '1', 'yes', 'on'].includes(raw)) return true
  if (['false', '0', 'no', 'off'].includes(raw)) return false
  reading.fail('must be true or false')
  return fallback
}

const FLAG_TYPE = 'boolean'

const flag = (fallback: boolean): Kind<boolean> => ({
  type: FLAG_TYPE,
  default: code(String(fallback)),
  parse: (reading) => parseFlag(reading, fallback),
})

const rate = (fallback: string): Kind<RateLimit> => ({
  type: '`<requests>/<seconds>`',
  default: code(fallback),
  parse: (reading) => {
    const raw = reading.raw ?? fallback
    const match = /^(\d+)\s*\/\s*(\d+)$/.exec(raw)
    if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) {
      reading.fail('must look like <requests>/<seconds>, e.g. 5/300')
      return { max: 5, windowMs: 300_000 }
    }
    return { max: Number(match[1]), windowMs: Number(match[2]) * 1000 }
  },
})

const text = (fallback: string): Kind<string> => ({ type: 'text', default: code(fallback), parse: (reading) => reading.raw ?? fallback })

const optionalText = (type = 'text'): Kind<string | null> => ({ type, default: 'unset', parse: (reading) => reading.raw ?? null })

const optionalPath: Kind<string | null> = {
  type: 'path',
  default: 'unset',
  parse: (reading) => (reading.raw === undefined ? null : path.resolve(reading.raw)),
}

const urlType = (protocols: string[]) => `URL (${protocols.map((p) => p.replace(':', '')).join(', ')})`

/** A URL of one of the protocols (the default too is checked), without trailing slashes. */
function parseUrl(reading: Reading, fallback: string, protocols: string[]): string {
  const raw = reading.raw ?? fallback
  try {
    const parsed = new URL(raw)
    if (!protocols.includes(parsed.protocol)) {
      reading.fail(`must be a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL`)
    }
  } catch {
    reading.fail('must be a URL')
  }
  return raw.replace(/\/+$/, '')
}

const url = (protocols: string[], fallback: string): Kind<string> => ({
  type: urlType(protocols),
  default: code(fallback),
  parse: (reading) => parseUrl(reading, fallback, protocols),
})

const optionalUrl = (protocols: string[]): Kind<string | null> => ({
  type: urlType(protocols),
  default: 'unset',
  parse: (reading) => (reading.raw === undefined ? null : parseUrl(reading, '', protocols)),
})

function parseOneOf<T extends string>(reading: Reading, allowed: readonly T[], fallback: T): T {
  const raw = reading.raw
  if (raw === undefined) return fallback
  if ((allowed as readonly string[]).includes(raw)) return raw as T
  reading.fail(`must be one of ${allowed.join(', ')}`)
  return fallback
}

const oneOfType = (allowed: readonly string[]) => `one of ${allowed.map(code).join(', ')}`

const oneOf = <T extends string>(allowed: readonly T[], fallback: T): Kind<T> => ({
  type: oneOfType(allowed),
  default: code(fallback),
  parse: (reading) => parseOneOf(reading, allowed, fallback),
})

/** A secret of at least 32 characters, taken as given and never echoed; unset or empty: null. */
const longSecret: Kind<string | null> = {
  type: 'secret, ≥ 32 characters',
  default: 'unset',
  parse: (reading) => {
    const raw = reading.given
    if (raw === undefined || raw === '') return null
    // the value itself is a secret: never echoed
    if (raw.length < 32) reading.refuse('must be at least 32 characters (e.g. `openssl rand -base64 48`)')
    return raw
  },
}

/** false, a hop count, or the trusted proxies' addresses / CIDR ranges (never "trust everyone") */
const trustedProxies: Kind<TrustProxy> = {
  type: 'hop count or addresses',
  default: code('false'),
  parse: (reading) => {
    const raw = reading.raw
    if (raw === undefined || ['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false
    if (/^\d+$/.test(raw)) {
      if (Number(raw) <= 32) return Number(raw)
      reading.fail('a hop count must be from 0 to 32')
      return false
    }
    const list = raw
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean)
    const isAddress = (item: string) => {
      const [address, prefix, ...rest] = item.split('/')
      const family = isIP(address)
      if (!family || rest.length) return false
      return prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
    }
    if (list.length === 0 || !list.every(isAddress)) {
      reading.fail(
        'must be the number of proxies in front of Tern (e.g. 1) or their addresses and CIDR ranges (e.g. 10.0.0.1,10.1.0.0/16); "true" would let any client pick its own address through X-Forwarded-For',
      )
      return false
    }
    return list
  },
}

/** comma-separated ICE server URLs of the given schemes (`stun:host:port`, `turn:host:port?transport=udp`) */
const iceUrls = (schemes: string[], fallback: string): Kind<string[]> => ({
  type: `list of ${schemes.map(code).join('/')} URLs`,
  default: fallback === '' ? 'none' : code(fallback),
  parse: (reading) => {
    const list = (reading.raw ?? fallback)
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean)
    if (
      list.length > 20 ||
      !list.every(
        (item) =>
          item.length <= 256 &&
          schemes.some((s) => item.startsWith(s)) &&
          /^[a-z]+:[A-Za-z0-9.\-[\]:]+(\?transport=(udp|tcp))?$/.test(item),
      )
    ) {
      reading.fail(`must be a comma-separated list of ${schemes.join(' or ')} URLs, e.g. ${schemes[0]}host:3478`)
      return []
    }
    return list
  },
})

/** ADMIN_USERNAME and ADMIN_PASSWORD are both set or both unset (an empty password counts as unset). */
const adminPaired = (username: string | undefined, password: string | undefined) =>
  (username === undefined) === (password === undefined || password === '')

const isVapidPublicKey = (key: string) =>
  /^[A-Za-z0-9_-]+$/.test(key) && Buffer.from(key, 'base64url').length === 65 && Buffer.from(key, 'base64url')[0] === 4
const isVapidPrivateKey = (key: string) => /^[A-Za-z0-9_-]+$/.test(key) && Buffer.from(key, 'base64url').length === 32

const APNS_VARIABLES = ['APNS_KEY_FILE', 'APNS_KEY_ID', 'APNS_TEAM_ID', 'APNS_TOPIC'] as const

/** A variable read by another variable's parser: a member of a pair or group checked there, or NODE_ENV. */
function readByOthers(name: string, type: string, fallback: string, description: string): Variable<null> {
  return { name, key: null, type, default: fallback, description, parse: () => undefined }
}

// ---------------------------------------------------------------------------------------------
// The variables. `loadConfig` parses them in this order: a default may use a value above it.

export const SECTIONS = [
  {
    title: 'Listener and addresses',
    variables: [
      variable('PORT', 'port', integer(0, 65535, 3000), "the main listener's port (`0`: any free port)"),
      variable('HOST', 'host', text('127.0.0.1'), "the main listener's address (`0.0.0.0` or `::`: every interface)"),
      variable(
        'PUBLIC_BASE_URL',
        'publicBaseUrl',
        {
          type: urlType(['http:', 'https:']),
          default: '`http://<HOST>:<PORT>` (a wildcard `HOST` as `localhost`)',
          parse: (reading) => parseUrl(reading, defaultBaseUrl(reading.value('host'), reading.value('port')), ['http:', 'https:']),
        },
        'where clients reach Tern: `{base_url}` in links (invites, QR, referrals, files), and `https://` makes cookies `Secure`; set it behind a proxy or with `PORT=0`',
      ),
      variable(
        'TRUST_PROXY',
        'trustProxy',
        trustedProxies,
        'whom to believe in `X-Forwarded-For` (rate limits, session IPs): the number of proxies in front of Tern (`1`), or their addresses and CIDR ranges (`10.0.0.1,10.1.0.0/16`); `true` is refused',
      ),
      variable(
        'HTTP_REQUEST_TIMEOUT_SECONDS',
        'httpRequestTimeoutSeconds',
        integer(1, 86_400, 30),
        "a request's headers and an ordinary body must arrive within this time, and an upload body may not pause this long; else 408 `request_timeout` (WebSockets are not affected)",
      ),
      variable(
        'CORS_ORIGINS',
        'corsOrigins',
        {
          type: 'comma-separated origins',
          default: 'unset (no cross-origin access)',
          parse: (reading) =>
            (reading.raw ?? '')
              .split(',')
              .map((origin) => origin.trim())
              .filter(Boolean),
        },
        'origins allowed cross-origin access, or `*` for any origin (without credentials)',
      ),
      readByOthers(
        'NODE_ENV',
        'text',
        'unset',
        '`production` refuses `PAYMENT_PROVIDER=test` and turns `WEBHOOK_REQUIRE_HTTPS` on by default',
      ),
    ],
  },
  {
    title: 'Data',
    variables: [
      variable(
        'DATA_DIR',
        'dataDir',
        { type: 'path', default: '`./data`', parse: (reading) => path.resolve(reading.raw ?? './data') },
        'the SQLite database, uploaded files (`<DATA_DIR>/uploads`) and the keys Tern generates for itself',
      ),
      variable(
        'DATABASE_URL',
        'databaseUrl',
        {
          type: '`sqlite:<path>` or `postgres://…`',
          default: '`sqlite:<DATA_DIR>/tern.db`',
          parse: (reading) => {
            const databaseUrl = reading.raw ?? `sqlite:${path.join(reading.value('dataDir'), 'tern.db')}`
            if (
              !/^postgres(ql)?:\/\//.test(databaseUrl) &&
              (!databaseUrl.startsWith('sqlite:') || databaseUrl.length === 'sqlite:'.length)
            ) {
              reading.fail('must be sqlite:<path> or postgres://…')
            }
            return databaseUrl
          },
        },
        "the database; on SQLite, message search's index is a second file beside it (`tern.search.db`)",
      ),
      variable(
        'REDIS_URL',
        'redisUrl',
        optionalUrl(['redis:', 'rediss:']),
        'Redis, for several instances: fan-out between them, presence and shared rate limits',
      ),
      variable(
        'REDIS_PREFIX',
        'redisPrefix',
        text('tern:'),
        'prefix of every Redis key and channel, so several deployments can share one Redis',
      ),
    ],
  },
  {
    title: 'Logs and metrics',
    variables: [
      variable(
        'LOG_LEVEL',
        'logLevel',
        oneOf(LOG_LEVELS, 'info'),
        'JSON lines (pino), one per request, written in batches of 32 KiB or every second and flushed at exit, also after a crash',
      ),
      variable(
        'LOG_FILE',
        'logFile',
        optionalPath,
        "append the log to this file (created readable by the server's user only, 0600) instead of stdout",
      ),
      variable(
        'METRICS_TOKEN',
        'metricsToken',
        optionalText('secret'),
        '`/metrics` (Prometheus) is served on the main listener to `Authorization: Bearer <METRICS_TOKEN>`',
      ),
      variable(
        'METRICS_PORT',
        'metricsPort',
        optionalInteger(0, 65535),
        '`/metrics` is served on a listener of its own instead, on this port',
      ),
      variable('METRICS_HOST', 'metricsHost', text('127.0.0.1'), "that listener's address"),
      variable('SLOW_REQUEST_MS', 'slowRequestMs', integer(1, 3_600_000, 1000), 'a request slower than this is logged and counted'),
      variable('SLOW_QUERY_MS', 'slowQueryMs', integer(1, 3_600_000, 250), 'a database query slower than this is logged and counted'),
    ],
  },
  {
    title: 'Accounts and sign-in',
    variables: [
      variable('SESSION_TTL_DAYS', 'sessionTtlDays', integer(1, 3650, 30), 'sliding session lifetime'),
      variable(
        'ADMIN_USERNAME',
        'adminUsername',
        {
          type: 'username',
          default: 'unset',
          parse: (reading) => {
            const username = reading.raw
            if (!adminPaired(username, reading.env('ADMIN_PASSWORD'))) reading.report('ADMIN_USERNAME/ADMIN_PASSWORD: set both or neither')
            if (username !== undefined && !/^[A-Za-z0-9_]{3,32}$/.test(username))
              reading.fail('must be 3 to 32 characters: letters, digits and underscores')
            return username ?? null
          },
        },
        'an admin account with this name and `ADMIN_PASSWORD` is ensured at start (both or neither)',
      ),
      variable(
        'ADMIN_PASSWORD',
        'adminPassword',
        {
          type: 'secret, ≥ 8 characters',
          default: 'unset',
          parse: (reading) => {
            const password = reading.given
            if (adminPaired(reading.read('ADMIN_USERNAME'), password) && password !== undefined && password.length < 8)
              reading.refuse('must be at least 8 characters')
            return password || null
          },
        },
        "that admin account's password",
      ),
      variable(
        'ADMIN_REQUIRE_2FA',
        'adminRequire2fa',
        flag(false),
        'admin endpoints need a session that finished sign-in with a second factor (else 403)',
      ),
      variable(
        'SECRET_KEY',
        'secretKey',
        { ...longSecret, default: 'a random key kept in `<DATA_DIR>/secret.key`' },
        'encrypts two-factor secrets and hashes mailed codes; give every instance the same one',
      ),
      variable(
        'OAUTH_PROVIDERS',
        'oauthProviders',
        {
          type: 'JSON',
          default: 'none',
          parse: (reading) => {
            if (reading.raw === undefined) return []
            const parsed = parseOAuthProviders(reading.raw)
            if (typeof parsed === 'string') {
              // the value holds client secrets: never echoed
              reading.refuse(parsed)
              return []
            }
            return parsed
          },
        },
        'OpenID Connect providers to sign in with: `[{"id", "issuer", "client_id", "client_secret"}]` ([auth.md](auth.md))',
      ),
      variable(
        'LOGIN_CODE_RESEND_SECONDS',
        'loginCodeResendSeconds',
        integer(1, 3600, 60),
        'the wait before another sign-in code is mailed to the same address',
      ),
      variable(
        'PASSWORD_RESET_CODE_MINUTES',
        'passwordResetCodeMinutes',
        integer(1, 1440, 15),
        'how long a mailed password-reset code (or a code for a step of an account without a password) works',
      ),
      variable(
        'ACCOUNT_USERNAME_GRACE_DAYS',
        'accountUsernameGraceDays',
        integer(0, 3650, 30),
        "a deleted account's username stays unavailable this long (`0`: free at once)",
      ),
      variable(
        'UNCONFIRMED_EMAIL_TTL_DAYS',
        'unconfirmedEmailTtlDays',
        integer(1, 3650, 7),
        'an email address nobody confirmed lapses after this long, and another account may take it',
      ),
      variable(
        'PHONE_DEFAULT_REGION',
        'phoneDefaultRegion',
        {
          type: 'two-letter region code',
          default: code('RU'),
          parse: (reading) => {
            const raw = (reading.raw ?? 'RU').toUpperCase()
            if (isSupportedCountry(raw)) return raw
            reading.fail('must be a two-letter region code, e.g. RU, US or DE')
            return 'RU'
          },
        },
        'the region of phone numbers written without a country code',
      ),
    ],
  },
  {
    title: 'Mail',
    variables: [
      variable(
        'SMTP_URL',
        'smtpUrl',
        optionalUrl(['smtp:', 'smtps:']),
        'the SMTP server mail goes through, credentials in the URL (`smtp://user:pass@host:587`); unset: each mail is written to the log instead',
      ),
      variable('MAIL_FROM', 'mailFrom', text('Tern <no-reply@localhost>'), 'the From of every mail'),
      variable(
        'MAIL_TIMEOUT_SECONDS',
        'mailTimeoutSeconds',
        integer(1, 60, 5),
        'how long connecting and each SMTP reply may take; a mail that cannot be sent answers 503 `mail_unavailable`',
      ),
    ],
  },
  {
    title: 'Rate limits',
    variables: [
      variable(
        'WRITE_RATE_LIMIT_IP',
        'writeRateLimitIp',
        rate('3000/60'),
        'writes (requests other than GET) per client IP; past it, 429 `rate_limited` with `Retry-After`',
      ),
      variable('WRITE_RATE_LIMIT_USER', 'writeRateLimitUser', rate('600/60'), 'writes per signed-in user'),
      variable('WS_FRAME_RATE_LIMIT', 'wsFrameRateLimit', rate('50/1'), 'frames per gateway socket; past twice that, the socket is closed'),
      variable('REGISTER_RATE_LIMIT', 'registerRateLimit', rate('5/300'), 'registrations per client IP'),
      variable('LOGIN_RATE_LIMIT', 'loginRateLimit', rate('30/60'), 'password logins per client IP'),
      variable(
        'LOGIN_LOOKUP_RATE_LIMIT',
        'loginLookupRateLimit',
        rate('10/60'),
        'login_v3 `email` steps (does this address have an account?) per client IP',
      ),
      variable(
        'LOGIN_ACCOUNT_RATE_LIMIT',
        'loginAccountRateLimit',
        rate('10/900'),
        'wrong passwords per sign-in name, and wrong second-factor codes per account, from any IP (then 429 until the window ends)',
      ),
      variable('QR_GENERATE_RATE_LIMIT', 'qrGenerateRateLimit', rate('10/60'), 'QR login codes generated per client IP'),
      variable('CONTACT_IMPORT_RATE_LIMIT', 'contactImportRateLimit', rate('30/3600'), 'contact imports (phone lookups) per client IP'),
      variable('PASSWORD_RESET_RATE_LIMIT', 'passwordResetRateLimit', rate('5/900'), '`auth/password/forgot` requests per client IP'),
      variable(
        'PASSWORD_RESET_EMAIL_RATE_LIMIT',
        'passwordResetEmailRateLimit',
        rate('3/3600'),
        '`auth/password/forgot` requests per address, whether or not an account has it',
      ),
      variable('ACCOUNT_EXPORT_RATE_LIMIT', 'accountExportRateLimit', rate('1/60'), 'data exports (`auth/export`) per user'),
    ],
  },
  {
    title: 'Messaging and real time',
    variables: [
      variable(
        'UPDATE_LOG_KEEP',
        'updateLogKeep',
        integer(10, 100_000_000, 10_000),
        'updates kept per user in the update log; a resume from further back is told to `reset`',
      ),
      variable(
        'SEND_FAST_PATH',
        'sendFastPath',
        flag(true),
        "common sends (text in a personal chat) take the database's fast path: prepared statements on SQLite, group-committed batches on PostgreSQL; `false`: every send takes the general path (same results, slower)",
      ),
      variable(
        'WS_HEARTBEAT_SECONDS',
        'wsHeartbeatSeconds',
        integer(1, 3600, 30),
        'how often each WebSocket is pinged; one that answered neither the previous ping nor sent anything is dropped, and its user may turn offline',
      ),
      variable(
        'WS_MAX_SOCKETS_PER_USER',
        'wsMaxSocketsPerUser',
        integer(1, 10_000, 100),
        'open WebSockets one user may hold on one instance; the next is closed with 4029',
      ),
    ],
  },
  {
    title: 'Files and stories',
    variables: [
      variable('MAX_UPLOAD_BYTES', 'maxUploadBytes', integer(1, Number.MAX_SAFE_INTEGER, 52_428_800), 'upload cap in bytes'),
      variable(
        'PREMIUM_MAX_UPLOAD_BYTES',
        'premiumMaxUploadBytes',
        integer(1, Number.MAX_SAFE_INTEGER, 2_147_483_648),
        'upload cap in bytes for premium users',
      ),
      variable(
        'UPLOAD_SESSION_TTL_SECONDS',
        'uploadSessionTtlSeconds',
        integer(1, 30 * 86_400, 86_400),
        'an unfinished chunked upload expires this long after its last chunk (a tus upload: after it began)',
      ),
      variable(
        'UPLOAD_SWEEP_INTERVAL_SECONDS',
        'uploadSweepIntervalSeconds',
        integer(1, 86_400, 600),
        'how often expired unfinished uploads and their bytes are removed',
      ),
      variable('STORY_LIFETIME_SECONDS', 'storyLifetimeSeconds', integer(1, 30 * 86_400, 86_400), 'how long a story lives'),
      variable(
        'STORY_CLEANUP_INTERVAL_SECONDS',
        'storyCleanupIntervalSeconds',
        integer(1, 86_400, 1800),
        'how often expired stories are removed with their media (once across instances; also at start)',
      ),
    ],
  },
  {
    title: 'Premium and referrals',
    variables: [
      variable(
        'PREMIUM_PLANS',
        'premiumPlans',
        {
          type: 'JSON',
          default: 'monthly 300 RUB, yearly 2990 RUB',
          parse: (reading) => {
            if (reading.raw === undefined) return DEFAULT_PREMIUM_PLANS
            const parsed = parsePremiumPlans(reading.raw)
            if (typeof parsed === 'string') {
              reading.fail(parsed)
              return DEFAULT_PREMIUM_PLANS
            }
            return parsed
          },
        },
        'the plans on sale: `[{"id", "title", "months", "price_rub"}]`, prices in roubles',
      ),
      variable(
        'PAYMENT_PROVIDER',
        'paymentProvider',
        {
          type: oneOfType(['test', 'manual']),
          default: 'unset',
          parse: (reading) => {
            // no provider unless one is chosen: `test` pays every order at once, so never in production
            const provider = reading.raw === undefined ? null : parseOneOf(reading, ['test', 'manual'] as const, 'manual')
            if (provider === 'test' && reading.read('NODE_ENV') === 'production') {
              reading.report(
                'PAYMENT_PROVIDER: test pays every order at once without taking money, and is refused with NODE_ENV=production',
              )
            }
            return provider
          },
        },
        '`manual`: orders wait for an admin to mark them paid; `test` (development only, announced at start, refused with `NODE_ENV=production`): every order is paid at once without taking money; unset: premium cannot be bought (503 `payments_unavailable`)',
      ),
      variable(
        'PAYMENT_WEBHOOK_SECRET',
        'paymentWebhookSecret',
        optionalText('secret'),
        'the secret payment providers sign `POST /premium/webhook/{provider}` with; unset: no webhook',
      ),
      variable(
        'PREMIUM_RENEW_BEFORE_SECONDS',
        'premiumRenewBeforeSeconds',
        integer(0, 30 * 86_400, 86_400),
        'how long before premium ends the renewal job asks for the next payment',
      ),
      variable(
        'PREMIUM_RENEWAL_INTERVAL_SECONDS',
        'premiumRenewalIntervalSeconds',
        integer(1, 86_400, 3600),
        'how often the renewal job runs (once across instances; also at start)',
      ),
      variable(
        'REFERRAL_WINDOW_DAYS',
        'referralWindowDays',
        integer(1, 365, 7),
        'a new account may name its inviter within this many days of being created',
      ),
      variable(
        'REFERRAL_MONTHLY_CAP',
        'referralMonthlyCap',
        integer(0, 100_000, 20),
        'referrals one inviter may have in 30 days (then 409)',
      ),
    ],
  },
  {
    title: 'Bots and webhooks',
    variables: [
      variable(
        'BOT_RATE_LIMIT',
        'botRateLimit',
        rate('30/1'),
        'messages one bot may send over all its chats; past it, 429 with `retry_after`',
      ),
      variable('BOT_CHAT_RATE_LIMIT', 'botChatRateLimit', rate('5/5'), 'messages one bot may send into one personal chat'),
      variable('BOT_GROUP_RATE_LIMIT', 'botGroupRateLimit', rate('20/60'), 'messages one bot may send into one group or channel'),
      variable(
        'WEBHOOK_REQUIRE_HTTPS',
        'webhookRequireHttps',
        {
          type: FLAG_TYPE,
          default: '`true` with `NODE_ENV=production`, else `false`',
          parse: (reading) => parseFlag(reading, reading.read('NODE_ENV') === 'production'),
        },
        'bot webhook URLs must be https',
      ),
      variable(
        'WEBHOOK_ALLOW_PRIVATE',
        'webhookAllowPrivate',
        flag(false),
        'allow outgoing deliveries (webhooks, Web Push) to loopback, private and link-local addresses, and plain http to loopback (tests only)',
      ),
      variable(
        'WEBHOOK_RETRY_BASE_MS',
        'webhookRetryBaseMs',
        integer(1, 3_600_000, 5000),
        'the first retry of a failed bot webhook delivery waits about this long, doubling per attempt (at most an hour)',
      ),
      variable(
        'WEBHOOK_RETRY_FOR_SECONDS',
        'webhookRetryForSeconds',
        integer(1, 30 * 86_400, 86_400),
        'how long a failing delivery is retried before it is marked failed',
      ),
      variable(
        'WEBHOOK_DELIVERY_INTERVAL_MS',
        'webhookDeliveryIntervalMs',
        integer(10, 3_600_000, 250),
        'no longer used: webhook deliveries go out as soon as they are queued; still read, so an existing setting is accepted',
      ),
    ],
  },
  {
    title: 'Push notifications',
    variables: [
      variable(
        'VAPID_PUBLIC_KEY',
        'vapidPublicKey',
        {
          type: 'base64url P-256 public key',
          default: 'generated once into `<DATA_DIR>/vapid.json`',
          parse: (reading) => {
            const publicKey = reading.raw
            const privateKey = reading.read('VAPID_PRIVATE_KEY')
            if (publicKey === undefined && privateKey === undefined) return null
            if (publicKey === undefined || privateKey === undefined) {
              reading.report('VAPID_PUBLIC_KEY/VAPID_PRIVATE_KEY: set both or neither')
              return null
            }
            if (!isVapidPublicKey(publicKey)) {
              reading.fail('must be an uncompressed P-256 public key, base64url (65 bytes)')
              return null
            }
            return isVapidPrivateKey(privateKey) ? publicKey : null
          },
        },
        'the Web Push key pair, with `VAPID_PRIVATE_KEY` (both or neither); every instance needs the same pair ([push.md](push.md))',
      ),
      variable(
        'VAPID_PRIVATE_KEY',
        'vapidPrivateKey',
        {
          type: 'base64url P-256 private key',
          default: 'generated with the public key',
          parse: (reading) => {
            const publicKey = reading.read('VAPID_PUBLIC_KEY')
            const privateKey = reading.raw
            // a missing partner or a bad public key is reported with VAPID_PUBLIC_KEY
            if (publicKey === undefined || privateKey === undefined || !isVapidPublicKey(publicKey)) return null
            if (!isVapidPrivateKey(privateKey)) {
              // the value itself is a secret: never echoed
              reading.refuse('must be a P-256 private key, base64url (32 bytes)')
              return null
            }
            return privateKey
          },
        },
        "the key pair's private half",
      ),
      variable(
        'VAPID_SUBJECT',
        'vapidSubject',
        {
          type: '`mailto:` or `https:` URL',
          default: '`mailto:admin@<host of PUBLIC_BASE_URL>` (`localhost` when that is unset)',
          parse: (reading) => {
            const raw = reading.raw
            if (raw === undefined) {
              let host = 'localhost'
              try {
                host = new URL(reading.read('PUBLIC_BASE_URL') ?? 'http://localhost').hostname.replace(/^\[|\]$/g, '') || 'localhost'
              } catch {
                // PUBLIC_BASE_URL's own check reports it
              }
              return `mailto:admin@${host}`
            }
            if (!/^mailto:[^\s@]+@[^\s@]+$/.test(raw) && !/^https:\/\/[^\s]+$/.test(raw))
              reading.fail('must be a mailto: address or an https: URL')
            return raw
          },
        },
        'the contact push services see',
      ),
      variable(
        'PUSH_MAX_SUBSCRIPTIONS',
        'pushMaxSubscriptions',
        integer(1, 1000, 20),
        'push subscriptions (devices) one user may register; the next is 409',
      ),
      variable(
        'PUSH_DELIVERY_INTERVAL_MS',
        'pushDeliveryIntervalMs',
        integer(50, 3_600_000, 1000),
        'how long a queued notification gathers the messages that follow it in its chat before it goes (one push per burst)',
      ),
      variable(
        'PUSH_MAX_ATTEMPTS',
        'pushMaxAttempts',
        integer(1, 50, 5),
        'attempts at a notification a push service keeps failing before it is dropped',
      ),
      variable('PUSH_TIMEOUT_SECONDS', 'pushTimeoutSeconds', integer(1, 60, 5), 'how long one request to a push service may take'),
      variable(
        'FCM_SERVICE_ACCOUNT_FILE',
        'fcmServiceAccountFile',
        optionalPath,
        "a Google service-account JSON file: FCM tokens are sent through FCM's HTTP v1 API; unset: they are kept and skipped with a log line",
      ),
      variable('FCM_API_URL', 'fcmApiUrl', url(['https:', 'http:'], 'https://fcm.googleapis.com'), "FCM's API origin"),
      variable(
        'APNS_KEY_FILE',
        'apns',
        {
          type: 'path',
          default: 'unset',
          parse: (reading) => {
            const [keyFile, keyId, teamId, topic] = APNS_VARIABLES.map((name) => reading.read(name))
            const given = [keyFile, keyId, teamId, topic].filter((v) => v !== undefined).length
            if (given === 0) return null
            if (given < 4) {
              reading.report(`${APNS_VARIABLES.join('/')}: set all four or none`)
              return null
            }
            return { keyFile: path.resolve(keyFile!), keyId: keyId!, teamId: teamId!, topic: topic! }
          },
        },
        'APNs token auth: the `.p8` key file, with the three below (all four or none); unset: APNs tokens are kept and skipped with a log line',
      ),
      readByOthers('APNS_KEY_ID', 'text', 'unset', "the key's id"),
      readByOthers('APNS_TEAM_ID', 'text', 'unset', 'the team id'),
      readByOthers('APNS_TOPIC', 'text', 'unset', "the app's bundle id"),
      variable(
        'APNS_URL',
        'apnsUrl',
        url(['https:', 'http:'], 'https://api.push.apple.com'),
        "APNs' origin (`https://api.sandbox.push.apple.com` for development builds)",
      ),
    ],
  },
  {
    title: 'Calls and video',
    variables: [
      variable(
        'CALL_RING_TIMEOUT_SECONDS',
        'callRingTimeoutSeconds',
        integer(5, 600, 60),
        'a call nobody answers ends as `missed` after this long',
      ),
      variable('VIDEO_PORT', 'videoPort', integer(0, 65535, 5001), "the video signaling service's port"),
      variable(
        'VIDEO_HOST',
        'videoHost',
        { type: 'text', default: '`HOST`', parse: (reading) => reading.raw ?? reading.value('host') },
        "the video service's address",
      ),
      variable(
        'VIDEO_URL',
        'videoUrl',
        optionalUrl(['http:', 'https:']),
        'where the main service reaches the video service; unset: `npm start` runs it in-process',
      ),
      variable(
        'VIDEO_PUBLIC_URL',
        'videoPublicUrl',
        optionalUrl(['ws:', 'wss:']),
        "the signaling URL handed to clients (e.g. behind a proxy); unset: derived from the video service's address",
      ),
      variable(
        'VIDEO_CALLBACK_URL',
        'videoCallbackUrl',
        optionalUrl(['http:', 'https:']),
        "where the video service sends its reports; unset: this server's own listener",
      ),
      variable(
        'VIDEO_SECRET',
        'videoSecret',
        { ...longSecret, default: 'a random one kept in `<DATA_DIR>/video.secret`' },
        "signs room tickets and the video service's reports; every service needs the same one",
      ),
      variable(
        'VIDEO_TIMEOUT_MS',
        'videoTimeoutMs',
        integer(10, 60_000, 5000),
        'limit on each request from the main service to the video service; past it, 504 `upstream_timeout`',
      ),
      variable('VIDEO_TICKET_TTL_SECONDS', 'videoTicketTtlSeconds', integer(5, 3600, 60), 'how long a room ticket is good for'),
      variable(
        'VIDEO_ROOM_IDLE_SECONDS',
        'videoRoomIdleSeconds',
        integer(5, 7 * 86_400, 600),
        'a room nobody is connected to ends after this long',
      ),
      variable(
        'VIDEO_MAX_SOCKETS_PER_ROOM',
        'videoMaxSocketsPerRoom',
        integer(1, 1000, 4),
        'joined signaling sockets one user may hold in one room on one video service; the next is closed with 4029',
      ),
      variable(
        'VIDEO_MAX_SOCKETS_PER_USER',
        'videoMaxSocketsPerUser',
        integer(1, 10_000, 16),
        'joined signaling sockets one user may hold in all rooms on one video service',
      ),
      variable('VIDEO_TICKET_RATE_LIMIT', 'videoTicketRateLimit', rate('30/60'), 'room tickets per user; past it, 429 `rate_limited`'),
      variable(
        'VIDEO_MEDIA_RATE_LIMIT',
        'videoMediaRateLimit',
        rate('10/1'),
        '`media` frames per signaling socket; past it, an `error` frame `rate_limited` and the frame is dropped',
      ),
      variable(
        'VIDEO_MEDIA_REPORT_RATE_LIMIT',
        'videoMediaReportRateLimit',
        rate('5/1'),
        'media reports the main service writes per participant of a room; past it, 429',
      ),
      variable('STUN_URLS', 'stunUrls', iceUrls(['stun:'], 'stun:stun.l.google.com:19302'), 'STUN servers offered to clients'),
      variable(
        'TURN_URLS',
        'turnUrls',
        iceUrls(['turn:', 'turns:'], ''),
        'TURN servers offered to clients, with credentials, when `TURN_SECRET` is set',
      ),
      variable(
        'TURN_SECRET',
        'turnSecret',
        optionalText('secret'),
        "the TURN REST API shared secret (coturn's `static-auth-secret`); unset: no TURN server is offered",
      ),
      variable(
        'TURN_CREDENTIAL_TTL_SECONDS',
        'turnCredentialTtlSeconds',
        integer(60, 7 * 86_400, 86_400),
        'how long TURN credentials are good for',
      ),
    ],
  },
] as const satisfies readonly Section[]

/** Compile-time check: every Config field is set by a variable's parser, or derived in loadConfig. */
type Unset = Exclude<keyof Config, (typeof SECTIONS)[number]['variables'][number]['key'] | 'dialect' | 'uploadDir'>
export type EveryFieldIsSet = [Unset] extends [never] ? true : { unset: Unset }
export const everyFieldIsSet: EveryFieldIsSet = true

/** Every variable, in the order `loadConfig` parses them. */
export const VARIABLES: readonly Variable[] = (SECTIONS as readonly Section[]).flatMap((section) => section.variables)

type Env = Record<string, string | undefined>

/** Parses and validates the environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = []
  const values = new Map<keyof Config, unknown>()
  const read = (name: string): string | undefined => {
    const value = env[name]
    return value === undefined || value.trim() === '' ? undefined : value.trim()
  }
  for (const { name, key, parse } of VARIABLES) {
    const value = parse({
      raw: read(name),
      given: env[name],
      read,
      env: (other) => env[other],
      value: <K extends keyof Config>(wanted: K): Config[K] => {
        if (!values.has(wanted)) throw new Error(`config: ${name} reads ${wanted}, which is parsed after it`)
        return values.get(wanted) as Config[K]
      },
      fail: (why) => problems.push(`${name}: ${why} (got ${JSON.stringify(env[name])})`),
      refuse: (why) => problems.push(`${name}: ${why}`),
      report: (problem) => problems.push(problem),
    })
    if (key !== null) values.set(key, value)
  }
  const databaseUrl = values.get('databaseUrl') as string
  values.set('dialect', /^postgres(ql)?:\/\//.test(databaseUrl) ? 'postgres' : 'sqlite')
  values.set('uploadDir', path.join(values.get('dataDir') as string, 'uploads'))

  if (problems.length > 0) throw new ConfigError(problems)
  return Object.freeze(Object.fromEntries(values) as unknown as Config)
}

/** The SQLite file path of a `sqlite:` URL. */
export function sqlitePath(databaseUrl: string): string {
  return path.resolve(databaseUrl.slice('sqlite:'.length))
}
