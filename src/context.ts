/** AppContext: the whole dependency graph, built once per process (or per test server). */
import { Redis } from 'ioredis'
import pino, { type Logger } from 'pino'
import { sqlitePath, type Config, type Dialect } from './config.js'
import { loggedUrl } from './http/request-log.js'
import { createDatabase, type Db, type DatabaseHandle } from './db/database.js'
import { EventBus } from './events/bus.js'
import { ControlChannel } from './events/control.js'
import { MessageIndex } from './modules/search/message-index.js'
import { AuthCache } from './modules/sessions/auth-cache.js'
import { TokenLookups } from './modules/sessions/token-lookups.js'
import { WriteLimits } from './http/write-limit.js'
import { LineBatch } from './lib/log-lines.js'
import { Metrics } from './lib/metrics.js'
import { systemClock, type Clock } from './lib/time.js'
import { createLocalFanout, createRedisFanout, type Fanout } from './realtime/fanout.js'
import { TypingTracker } from './realtime/typing.js'
import { LocalStorage } from './storage/local.js'
import type { Storage } from './storage/storage.js'

export interface AppContext {
  config: Readonly<Config>
  db: Db
  dialect: Dialect
  /** raw better-sqlite3 handle when on SQLite (hot-path prepared statements), else null */
  sqlite: DatabaseHandle['sqlite']
  /** who each token belongs to, in memory (SQLite only; modules/sessions/auth-cache.ts) */
  authCache: AuthCache | null
  /** who each token belongs to, read for a whole event-loop turn at once (PostgreSQL only; modules/sessions/token-lookups.ts) */
  tokenLookups: TokenLookups | null
  /** SQLite's message search index, in its own file, written by a worker (modules/search/message-index.ts); null on PostgreSQL */
  messageIndex: MessageIndex | null
  /** shared Redis connection when REDIS_URL is set (rate limits, presence); fan-out opens its own two */
  redis: Redis | null
  /** hands real-time frames to the instances holding the recipients' sockets (await `fanout.ready` before serving) */
  fanout: Fanout
  /** in-process listeners of committed events (events/bus.ts): where bots, push and webhooks hook in */
  events: EventBus
  /** internal control messages between instances, typed by ControlMap (events/control.ts) */
  control: ControlChannel
  /** typing indicators with their expiry timers (ephemeral, per instance) */
  typing: TypingTracker
  /** uploaded files (local directory; object storage can be put behind the same interface) */
  storage: Storage
  log: Logger
  /** per-IP and per-user limits on writes (http/write-limit.ts) */
  writeLimits: WriteLimits
  /** this instance's Prometheus metrics (lib/metrics.ts), served at /metrics */
  metrics: Metrics
  clock: Clock
  close(): Promise<void>
}

export interface ContextOverrides {
  log?: Logger
  clock?: Clock
}

/**
 * The log, on stdout (the server) or on stderr (`dest: 2`: the CLI, whose stdout is its answer
 * and may be read by a program), or appended to LOG_FILE, which is created readable by the
 * server's user only (0600): it holds addresses, and mails when SMTP_URL is not set.
 */
export function createLogger(config: Pick<Config, 'logLevel'> & { logFile?: string | null }, dest: 1 | 2 = 1): Logger {
  // Asynchronous, batched output (lib/log-lines.ts): lines are gathered up to 32 KiB (or 1 s) and
  // written together. They are flushed synchronously when the process exits, also on a crash;
  // only a SIGKILL can lose the last second of lines.
  const sink = config.logFile
    ? pino.destination({ dest: config.logFile, sync: false, minLength: 0, maxWrite: 1024 * 1024, append: true, mkdir: true, mode: 0o600 })
    : pino.destination({ dest, sync: false, minLength: 0, maxWrite: 1024 * 1024 })
  const destination = LineBatch.flushedOnExit(sink)
  setInterval(() => destination.drain(), 1000).unref()
  return pino(
    {
      level: config.logLevel,
      redact: LOG_REDACTION,
    },
    destination,
  )
}

/**
 * Credentials never reach the log, wherever they appear: fields that hold one are replaced, and a
 * URL (which may carry `?token=`, in any spelling) keeps everything but its credentials.
 */
export const LOG_REDACTION = {
  paths: [
    'req.headers.authorization',
    'req.headers.cookie',
    'res.headers["set-cookie"]',
    '*.password',
    '*.session_token',
    '*.token',
    'url',
    '*.url',
  ],
  censor: (value: unknown, path: string[]) =>
    path.at(-1) === 'url' ? (typeof value === 'string' ? loggedUrl(value) : value) : '[redacted]',
}

export function createContext(config: Readonly<Config>, overrides: ContextOverrides = {}): AppContext {
  const log = overrides.log ?? createLogger(config)
  const metrics = new Metrics()
  const database = createDatabase(config.databaseUrl, {
    slowQueryMs: config.slowQueryMs,
    onSlowQuery: (sql, milliseconds) => {
      metrics.slowQuery()
      log.warn({ sql: sql.slice(0, 2000), ms: Math.round(milliseconds) }, 'slow query')
    },
  })
  if (database.pool) {
    const pool = database.pool
    metrics.sources.pool = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount })
  }
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 3 }) : null
  redis?.on('error', (err) => log.warn({ err }, 'redis connection error'))
  const fanout = config.redisUrl
    ? createRedisFanout({ url: config.redisUrl, prefix: config.redisPrefix, log, onArrival: (lagMs) => metrics.fanoutArrived(lagMs) })
    : createLocalFanout()
  const typing = new TypingTracker(fanout)
  const messageIndex = database.sqlite ? new MessageIndex(database.sqlite, sqlitePath(config.databaseUrl)) : null
  const writeLimits = new WriteLimits({
    ip: config.writeRateLimitIp,
    user: config.writeRateLimitUser,
    redis,
    prefix: config.redisPrefix,
    log,
  })
  return {
    config,
    db: database.db,
    dialect: database.dialect,
    sqlite: database.sqlite,
    authCache: database.sqlite && database.reader ? new AuthCache(database.sqlite, database.reader) : null,
    tokenLookups: database.sqlite ? null : new TokenLookups(database.db),
    messageIndex,
    redis,
    fanout,
    events: new EventBus(log),
    control: new ControlChannel(fanout, log),
    typing,
    storage: new LocalStorage(config.uploadDir),
    log,
    metrics,
    writeLimits,
    clock: overrides.clock ?? systemClock,
    close: async () => {
      typing.close()
      writeLimits.close()
      await fanout.close()
      await redis?.quit().catch(() => redis.disconnect())
      await messageIndex?.close()
      await database.close()
    },
  }
}
