/**
 * startTestServer(): a real Tern server on an ephemeral port with its own temp dir and fresh
 * database, closed (and the database dropped) when the test file ends.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import type { AddressInfo } from 'node:net'
import { after } from 'node:test'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createContext, type AppContext } from '../../src/context.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { Clock } from '../../src/lib/time.js'
import { ensureAdmin } from '../../src/modules/users/service.js'
import { Client } from './client.js'
import { createTestDatabase, tempDir, testRedisUrl, type TestDatabase } from './database.js'

export interface TestUser {
  id: number
  username: string
  password: string
  email: string | null
  token: string
  api: Client
}

export interface TestServer {
  url: string
  ctx: AppContext
  app: FastifyInstance
  dataDir: string
  database: TestDatabase
  /** an anonymous client */
  api: Client
  registerUser(fields?: { username?: string; password?: string; email?: string; display_name?: string }): Promise<TestUser>
  /** a platform admin, created the way ADMIN_USERNAME/ADMIN_PASSWORD do, then logged in via the API */
  createAdmin(): Promise<TestUser>
  /**
   * Stops this server but keeps its database and data dir, then starts a new server on them with
   * the same options (a process restart). The new server takes over ownership: it drops the
   * database and removes the data dir when it closes.
   */
  restart(): Promise<TestServer>
  close(): Promise<void>
}

export interface TestServerOptions {
  /** environment-style configuration overrides */
  env?: Record<string, string>
  /** share another server's database (multi-instance tests); it is not dropped by this server */
  database?: TestDatabase
  /** control time (session expiry, last_activity); see harness/clock.ts */
  clock?: Clock
  /** reuse this data directory instead of a fresh one (restart) */
  dataDir?: string
  /** drop `database` on close even though it was passed in (restart hands ownership over) */
  ownsDatabase?: boolean
  /** the server's logger (harness/log-capture.ts keeps its lines), instead of one at TEST_LOG_LEVEL */
  log?: Logger
}

let counter = 0
export const uniqueName = (prefix = 'u') => `${prefix}${(++counter).toString(36)}_${randomBytes(4).toString('hex')}`.slice(0, 32)

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir()
  const ownDatabase = !options.database || options.ownsDatabase === true
  const database = options.database ?? (await createTestDatabase(dataDir))
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Test files register many users from one address; rate-limit tests set their own limits.
    REGISTER_RATE_LIMIT: '100000/300',
    LOGIN_RATE_LIMIT: '100000/60',
    LOGIN_ACCOUNT_RATE_LIMIT: '100000/900',
    // bots' Telegram-like send limits (bots-limits.test.ts sets its own)
    BOT_RATE_LIMIT: '100000/1',
    BOT_CHAT_RATE_LIMIT: '100000/1',
    BOT_GROUP_RATE_LIMIT: '100000/1',
    // writes per IP and per user (write-limits.test.ts sets its own)
    WRITE_RATE_LIMIT_IP: '10000000/60',
    WRITE_RATE_LIMIT_USER: '10000000/60',
    WS_FRAME_RATE_LIMIT: '100000/1',
    // premium tests buy with the test provider (premium.test.ts checks the default: none); it is
    // refused in production, so a server started as one has none unless it says so
    ...(options.env?.NODE_ENV === 'production' ? {} : { PAYMENT_PROVIDER: 'test' }),
    ...(testRedisUrl ? { REDIS_URL: testRedisUrl, REDIS_PREFIX: `tern-test-${randomBytes(6).toString('hex')}:` } : {}),
    ...options.env,
  })
  const ctx = createContext(config, { clock: options.clock, log: options.log })
  // As main.ts does: no socket before this instance hears what the others publish.
  await ctx.fanout.ready
  await migrateToLatest(ctx.db)
  const app = await buildApp(ctx)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const api = new Client(url)

  const registerUser: TestServer['registerUser'] = async (fields = {}) => {
    const body = { username: fields.username ?? uniqueName(), password: fields.password ?? 'correct horse battery', ...fields }
    const res = await api.post('/api.v2/api/auth/register', body)
    if (res.status !== 201) throw new Error(`registerUser failed: ${res.status} ${res.text}`)
    const { user, session_token } = res.body.data
    return {
      id: user.user_id,
      username: user.username,
      password: body.password,
      email: user.email,
      token: session_token,
      api: api.as(session_token),
    }
  }

  let closed = false
  const stop = async (keep: boolean) => {
    if (closed) return false
    closed = true
    await app.close()
    await ctx.close()
    if (keep) return true
    if (ownDatabase) await database.drop()
    fs.rmSync(dataDir, { recursive: true, force: true })
    return true
  }
  const server: TestServer = {
    url,
    ctx,
    app,
    dataDir,
    database,
    api,
    registerUser,
    async createAdmin() {
      const username = uniqueName('admin')
      const password = 'admin password 123'
      const user = await ensureAdmin(ctx, username, password)
      const res = await api.post('/api.v2/api/auth/login', { login: username, password })
      if (res.status !== 200) throw new Error(`admin login failed: ${res.status} ${res.text}`)
      const token = res.body.data.session_token
      return { id: user.id, username, password, email: null, token, api: api.as(token) }
    },
    async restart() {
      if (!(await stop(true))) throw new Error('restart: this server is already closed')
      return startTestServer({ ...options, database, dataDir, ownsDatabase: ownDatabase })
    },
    async close() {
      await stop(false)
    },
  }
  after(() => server.close())
  return server
}
