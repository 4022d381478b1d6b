/**
 * broadcast: an admin's broadcast to 100,000 users (POST /api/admin/broadcast, delivered by the
 * broadcast-delivery job in batch transactions), timed from the request to the last message, while
 * an open-loop load of V2/messages/send runs beside it; that load's p99 in 2-second windows while
 * the broadcast runs, against the same load's p99 with no broadcast. Each run starts on a fresh
 * data directory (the broadcast creates 100,000 personal chats with the system account); broadcast-pg
 * does the same on a fresh PostgreSQL database.
 */
import { call, login, MESSAGE_TEXT, openChat, registerMany, V2, type BenchUser } from '../lib/api.js'
import type { RequestSpec } from '../lib/http-client.js'
import { runLoad } from '../lib/load.js'
import type { LoadResult } from '../lib/load-engine.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { checkLoad, fmt, type BenchContext, type Scenario } from '../lib/scenario.js'
import { createPgDatabase, insertRows, type BenchPg } from '../lib/pg.js'
import { insertUsers, openTernDb } from '../lib/seed.js'
import { startServer, type Server } from '../lib/server.js'
import { median } from '../lib/stats.js'

const RECIPIENTS = 100_000
/** the send load beside the broadcast, requests per second (open loop) */
const SEND_RATE = 1000
const PAIRS = 16
const WINDOW_MS = 2000
const ADMIN = { username: 'bench_admin', password: 'bench admin password 1' }
const adminEnv = { ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password }

interface Broadcast {
  status: string
  sent: number
  total: number
}

async function prepare(ctx: BenchContext, dataDir: string, pgDb: BenchPg | null) {
  const env = { ...adminEnv, ...(pgDb ? { DATABASE_URL: pgDb.url } : {}) }
  let server = await startServer(ctx.machine, 'tern', dataDir, { env })
  const users = await registerMany(server.url, 'bsend', PAIRS * 2)
  const requests: RequestSpec[] = []
  for (let i = 0; i < PAIRS; i++) {
    const [sender, receiver] = [users[2 * i], users[2 * i + 1]]
    const chatId = await openChat(server.url, sender, receiver)
    requests.push({
      method: 'POST',
      path: `${V2}/messages/send`,
      headers: { authorization: `Bearer ${sender.token}` },
      body: { chat_id: chatId, content: MESSAGE_TEXT },
    })
  }
  await server.stop()
  const readers = RECIPIENTS - PAIRS * 2
  if (pgDb) {
    const hash = (await pgDb.client.query('select password_hash from users where id = $1', [users[0].id])).rows[0].password_hash
    const now = Date.now()
    const rows = function* () {
      for (let i = 0; i < readers; i++) yield [`reader_${i}`, `reader ${i}`, hash, now]
    }
    await insertRows(pgDb.client, 'users', ['username', 'display_name', 'password_hash', 'created_at'], rows())
    await pgDb.client.query('vacuum analyze')
  } else {
    const db = openTernDb(dataDir)
    insertUsers(db, 'reader', readers, users[0].id)
    db.close()
  }
  server = await startServer(ctx.machine, 'tern', dataDir, { env })
  const admin = await login(server.url, ADMIN.username, ADMIN.password)
  return { server, admin, requests }
}

const sendLoad = (ctx: BenchContext, server: Server, requests: RequestSpec[]) =>
  runLoad<LoadResult>(ctx.machine, 'http', {
    mode: 'open',
    rate: SEND_RATE,
    connections: 64,
    port: server.port,
    warmupMs: 0,
    durationMs: WINDOW_MS,
    requests,
  }).then((r) => checkLoad(ctx, 'send beside the broadcast', r))

async function progress(server: Server, admin: BenchUser, id: number) {
  return (await call<{ data: Broadcast }>(`${server.url}/api/admin/broadcasts/${id}`, { token: admin.token })).data
}

export const broadcast: Scenario = {
  name: 'broadcast',
  summary: `admin broadcast to ${fmt(RECIPIENTS)} users: time to finish, and the send p99 at ${fmt(SEND_RATE)} req/s while it runs`,
  run: (ctx) => measure(ctx, 'broadcast', false),
}

export const broadcastPg: Scenario = {
  name: 'broadcast-pg',
  summary: `the same broadcast on PostgreSQL (BENCH_PG_URL)`,
  run: (ctx) => measure(ctx, 'broadcast-pg', true),
}

async function measure(ctx: BenchContext, scenario: string, onPg: boolean): Promise<Row[]> {
  const seconds: number[] = []
  const rate: number[] = []
  const p99During: number[] = []
  const p99Worst: number[] = []
  const p99Quiet: number[] = []
  for (let run = 1; run <= ctx.runs; run++) {
    const dataDir = makeDataDir(scenario)
    const pgDb = onPg ? await createPgDatabase('broadcast') : null
    const { server, admin, requests } = await prepare(ctx, dataDir, pgDb)
    try {
      await sendLoad(ctx, server, requests) // warm-up: a fresh server's first requests compile the code
      p99Quiet.push((await sendLoad(ctx, server, requests)).latency.p99)
      const started = performance.now()
      const { data } = await call<{ data: { broadcast_id: number; recipients: number } }>(`${server.url}/api/admin/broadcast`, {
        token: admin.token,
        body: { content: 'Tern has a new version: what changed, in one message.' },
      })
      if (data.recipients < RECIPIENTS - 1) throw new Error(`the broadcast reaches ${data.recipients} users, not ${RECIPIENTS}`)
      const windows: number[] = []
      let state = await progress(server, admin, data.broadcast_id)
      while (state.status !== 'done') {
        windows.push((await sendLoad(ctx, server, requests)).latency.p99)
        state = await progress(server, admin, data.broadcast_id)
      }
      const elapsed = (performance.now() - started) / 1000
      if (state.sent !== data.recipients) throw new Error(`the broadcast finished with ${state.sent} of ${data.recipients} sent`)
      seconds.push(elapsed)
      rate.push(state.sent / elapsed)
      p99During.push(median(windows))
      p99Worst.push(Math.max(...windows))
      ctx.log(
        `  run ${run}: ${fmt(state.sent)} in ${fmt(elapsed, 1)} s (${fmt(state.sent / elapsed)}/s); send p99 quiet ${fmt(p99Quiet.at(-1)!, 2)} ms, during: median of ${windows.length} windows ${fmt(p99During.at(-1)!, 2)} ms, worst ${fmt(p99Worst.at(-1)!, 2)} ms`,
      )
    } finally {
      await server.stop()
      await pgDb?.drop()
      removeDataDir(dataDir)
    }
  }
  return [
    { scenario, figure: `broadcast to ${fmt(RECIPIENTS)} users, time to finish`, unit: 's', samples: seconds },
    { scenario, figure: 'broadcast messages written per second', unit: 'msg/s', samples: rate },
    { scenario, figure: `send p99 at ${fmt(SEND_RATE)} req/s, no broadcast`, unit: 'ms', samples: p99Quiet },
    { scenario, figure: `send p99 at ${fmt(SEND_RATE)} req/s during it (median 2 s window)`, unit: 'ms', samples: p99During },
    { scenario, figure: `send p99 at ${fmt(SEND_RATE)} req/s during it (worst 2 s window)`, unit: 'ms', samples: p99Worst },
  ] satisfies Row[]
}
