/**
 * send-pg: sends on PostgreSQL (group commit) against the plain PostgreSQL ceiling, on
 * one core shared by Node and PostgreSQL. Tern's POST V2/messages/send on a fresh PostgreSQL
 * database (100 sender → receiver pairs, each in its own personal chat, by `chat_id`) and a bare
 * Fastify route doing one insert per request (bench/servers/bare-pg-insert.ts, its own fresh
 * database, Node's default flags) are saturated by the same closed-loop generator with
 * byte-identical requests, alternately run by run; Tern's socket sends (`send` frames on the
 * WebSocket, each done when acknowledged after its commit and delivered to the receiver's socket:
 * socket-sends' load script, bench/load/socket-sends.ts) in the same chats take their turn in each
 * run. Then Tern's HTTP latency under an open-loop load of half its own HTTP maximum. Every
 * postgres process is pinned to the server's core for the whole scenario and put back afterwards
 * (bench/lib/pg-affinity.ts), and synchronous_commit is checked to be on (PostgreSQL's default):
 * each acknowledged send has had its WAL flushed.
 *
 * A bound runs beside them (bench/servers/bare-noop.ts): the same route answering without any
 * database. Its rate over the ceiling's is the most any HTTP send path could reach on this core,
 * whatever it does with PostgreSQL; the target is read against it.
 *
 * PostgreSQL's CPU counts as "other processes" in bench/run.ts's summary line (it is outside the
 * bench's process tree), so this scenario's runs always read as busy there; the log says how the
 * shared core was split between Node and PostgreSQL in each run.
 */
import { registerMany, sendRequests } from '../lib/api.js'
import type { RequestSpec } from '../lib/http-client.js'
import { runLoad } from '../lib/load.js'
import type { LoadResult } from '../lib/load-engine.js'
import { createPgDatabase, type BenchPg } from '../lib/pg.js'
import { pinPostgres, postgresCpuBetween, postgresCpuMs, type PgPinning } from '../lib/pg-affinity.js'
import { makeDataDir, removeDataDir, SERVER_CORE, threadCpuMs } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { closedLoad, fmt, type BenchContext, type Scenario } from '../lib/scenario.js'
import { startServer, type Server } from '../lib/server.js'
import { median } from '../lib/stats.js'
import type { HttpLoadSpec } from '../load/http.js'
import type { SocketSendsSpec } from '../load/socket-sends.js'
import type { PairLoadResult } from '../lib/pair-load.js'

/** sender → receiver pairs, each in its own personal chat (the send benches' load shape) */
const PAIRS = 100
/** closed-loop connections: the HTTP figure is at 100 connections, one per pair's sender */
const CONNECTIONS = 100
/** open-loop connection pool: far more than half-load ever needs in flight */
const POOL = 256
/** the target: Tern's sends at least this many times the one-insert-per-request ceiling */
const RATIO_TARGET = 5
/** socket sends, closed loop: messages each pair keeps in flight (socket-sends' default, BENCH_SOCKET_WINDOW) */
const WINDOW = Number(process.env.BENCH_SOCKET_WINDOW || 4)

const sumMs = (cpu: Map<number, number>) => [...cpu.values()].reduce((sum, ms) => sum + ms, 0)

async function count(db: BenchPg, table: string): Promise<number> {
  return Number((await db.client.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0].n)
}

/** WAL flushes of the whole PostgreSQL server so far (pg_stat_wal, PostgreSQL 14+), or null. */
async function walSyncs(db: BenchPg): Promise<number | null> {
  try {
    return Number((await db.client.query<{ n: string }>('select wal_sync as n from pg_stat_wal')).rows[0].n)
  } catch {
    return null
  }
}

/** synchronous_commit and fsync as this database sees them; loud when they are not the target's. */
async function checkDurability(ctx: BenchContext, db: BenchPg): Promise<void> {
  const show = async (name: string) => (await db.client.query<Record<string, string>>(`show ${name}`)).rows[0][name]
  const [syncCommit, fsync] = [await show('synchronous_commit'), await show('fsync')]
  ctx.log(`  PostgreSQL ${await show('server_version')}: synchronous_commit=${syncCommit}, fsync=${fsync}`)
  if (syncCommit !== 'on' || fsync !== 'on') {
    ctx.log(
      `  !!! synchronous_commit=${syncCommit}, fsync=${fsync}: the target is for synchronous_commit=on (and fsync on); these figures do not measure it`,
    )
  }
}

export const sendPg: Scenario = {
  name: 'send-pg',
  summary: `sends on PostgreSQL (${PAIRS} chats, synchronous_commit=on, PostgreSQL on the server's core): HTTP and socket max vs a bare one-insert route (target ≥ ${RATIO_TARGET}x), HTTP p99 at half load`,
  async run(ctx) {
    const ternDir = makeDataDir('send-pg')
    const bareDir = makeDataDir('send-pg-bare')
    const databases: BenchPg[] = []
    const servers: Server[] = []
    let pinning: PgPinning | null = null
    try {
      const ternDb = await createPgDatabase('send_pg')
      databases.push(ternDb)
      const bareDb = await createPgDatabase('send_pg_bare')
      databases.push(bareDb)
      await checkDurability(ctx, ternDb)
      // before the servers start: their backends are forked from the pinned postmaster
      pinning = await pinPostgres(ctx.machine, SERVER_CORE)
      ctx.log(`  ${pinning.note}`)

      const tern = await startServer(ctx.machine, 'tern', ternDir, { env: { DATABASE_URL: ternDb.url } })
      servers.push(tern)
      const bare = await startServer(ctx.machine, 'bare-pg-insert', bareDir, { env: { DATABASE_URL: bareDb.url } })
      servers.push(bare)
      const noop = await startServer(ctx.machine, 'bare-noop', bareDir)
      servers.push(noop)
      ctx.log(
        `  the bare route runs with Node's default flags (none of npm start's or BENCH_NODE_FLAGS), one insert and commit per request, a pool of 20 like Tern's`,
      )

      const users = await registerMany(tern.url, 'sendpg', PAIRS * 2)
      const requests: RequestSpec[] = await sendRequests(tern.url, users, PAIRS)
      // the socket load sends in the same chats as the HTTP load
      const pairs: SocketSendsSpec['pairs'] = requests.map((request, i) => ({
        senderToken: users[2 * i].token,
        receiverToken: users[2 * i + 1].token,
        chatId: (request.body as { chat_id: number }).chat_id,
      }))

      /**
       * One load window, `go`; checks that every send it counts as done (`done`) is in the server's
       * table, and logs how the core was shared.
       */
      const measured = async <T extends { throughput: number }>(
        server: Server,
        db: BenchPg,
        label: string,
        done: (result: T) => number,
        go: () => Promise<T>,
      ) => {
        const [storedBefore, walBefore] = [await count(db, 'messages'), await walSyncs(db)]
        const [nodeBefore, pgBefore, started] = [threadCpuMs(server.pid), postgresCpuMs(), performance.now()]
        const result = await go()
        const wallMs = performance.now() - started
        const nodeMs = sumMs(threadCpuMs(server.pid)) - sumMs(nodeBefore)
        const pgMs = postgresCpuBetween(pgBefore, postgresCpuMs())
        const [storedAfter, walAfter] = [await count(db, 'messages'), await walSyncs(db)]
        const stored = storedAfter - storedBefore
        // in-window answers are a subset of what was stored (warm-up sends are stored too)
        if (stored < done(result))
          throw new Error(`${label}: ${fmt(done(result))} sends acknowledged in the window but only ${fmt(stored)} rows stored`)
        const flushes = walBefore !== null && walAfter !== null ? walAfter - walBefore : null
        const perFlush = flushes
          ? `; ${fmt(flushes)} WAL flushes on the whole server, ${fmt(stored / flushes, 1)} rows stored per flush`
          : ''
        // CPU per stored row tells the two servers apart even when other processes take part of the core
        const share = (ms: number) => `${Math.round((ms / wallMs) * 100)}%`
        const perRow = (ms: number) => fmt(stored > 0 ? ms / stored : Number.NaN, 3)
        ctx.log(
          `    ${label}: ${fmt(result.throughput)}/s; over the run Node used ${share(nodeMs)} of a core and PostgreSQL (all its processes) ${share(pgMs)}, ` +
            `CPU per stored row: Node ${perRow(nodeMs)} ms, PostgreSQL ${perRow(pgMs)} ms${perFlush}`,
        )
        return result
      }
      const load = (server: Server, db: BenchPg, spec: Partial<HttpLoadSpec>, label: string) =>
        measured(
          server,
          db,
          label,
          (result: LoadResult) => result.completed,
          () => closedLoad(ctx, server.port, CONNECTIONS, requests, label, spec),
        )
      const socketLoad = (label: string) =>
        measured(
          tern,
          ternDb,
          label,
          (result: PairLoadResult) => result.done,
          async () => {
            const result = await runLoad<PairLoadResult>(ctx.machine, 'socket-sends', {
              port: tern.port,
              pairs,
              mode: 'closed',
              window: WINDOW,
              warmupMs: ctx.warmupMs,
              durationMs: ctx.durationMs,
            } satisfies SocketSendsSpec)
            if (result.missing > 0) throw new Error(`${label}: ${result.missing} messages never reached their receiver`)
            if (result.unacked > 0) throw new Error(`${label}: ${result.unacked} sends were never acknowledged`)
            if (result.cpu > 0.9) ctx.log(`  warning: ${label}: the load process used ${Math.round(result.cpu * 100)}% of its core`)
            return result
          },
        )

      // Bare, Tern over HTTP and Tern over the socket alternate run by run, so drift on the machine hits all alike.
      const bareMax: number[] = []
      const noopMax: number[] = []
      const ternMax: number[] = []
      const socketMax: number[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        bareMax.push((await load(bare, bareDb, {}, 'bare max')).throughput)
        const bound = await closedLoad(ctx, noop.port, CONNECTIONS, requests, 'bound: no database', { serverPid: noop.pid })
        noopMax.push(bound.throughput)
        ctx.log(
          `    bound (the same route without a database): ${fmt(bound.throughput)}/s = ${fmt(bound.throughput / bareMax.at(-1)!, 2)}x the ceiling; ` +
            `it used ${Math.round((bound.server?.cpu ?? Number.NaN) * 100)}% of its core, the load process ${Math.round(bound.cpu * 100)}% of its own`,
        )
        ternMax.push((await load(tern, ternDb, {}, 'Tern HTTP max')).throughput)
        const socket = await socketLoad('Tern socket max')
        socketMax.push(socket.throughput)
        const ratio = (value: number) => `${fmt(value / bareMax.at(-1)!, 2)}x`
        ctx.log(
          `  run ${run}: bare ${fmt(bareMax.at(-1)!)} req/s, Tern HTTP ${fmt(ternMax.at(-1)!)} req/s (${ratio(ternMax.at(-1)!)}), ` +
            `Tern socket ${fmt(socket.throughput)} msg/s (${ratio(socket.throughput)}; p99 receipt ${fmt(socket.latency.p99, 2)} ms, ack ${fmt(socket.ackLatency?.p99 ?? Number.NaN, 2)} ms)`,
        )
      }

      const half = Math.round(median(ternMax) / 2)
      const p50: number[] = []
      const p99: number[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        const result = await load(tern, ternDb, { mode: 'open', rate: half, connections: POOL }, 'Tern HTTP half load')
        if (result.throughput < half * 0.95) ctx.log(`  warning: only ${fmt(result.throughput)} of ${fmt(half)} req/s completed`)
        p50.push(result.latency.p50)
        p99.push(result.latency.p99)
        ctx.log(
          `  run ${run} at ${fmt(half)} req/s: Tern p50 ${fmt(result.latency.p50, 2)} ms, p99 ${fmt(result.latency.p99, 2)} ms, max ${fmt(result.latency.max, 1)} ms`,
        )
      }

      const scenario = this.name
      const where = pinning.pinned ? 'PostgreSQL on the server core' : 'PostgreSQL NOT pinned'
      return [
        { scenario, figure: 'bare Fastify + 1 PostgreSQL insert per request, max', unit: 'req/s', samples: bareMax },
        { scenario, figure: 'bound: the same Fastify route without a database, max', unit: 'req/s', samples: noopMax },
        {
          scenario,
          figure: 'bound / bare (the most any HTTP send path could reach here)',
          unit: 'x',
          samples: noopMax.map((t, i) => t / bareMax[i]),
        },
        { scenario, figure: 'Tern HTTP V2/messages/send on PostgreSQL, max', unit: 'req/s', samples: ternMax },
        {
          scenario,
          figure: `Tern HTTP / bare (${where})`,
          unit: 'x',
          samples: ternMax.map((t, i) => t / bareMax[i]),
          target: { min: RATIO_TARGET },
        },
        {
          scenario,
          figure: `Tern socket sends on PostgreSQL, max (acked + delivered, ${WINDOW} in flight per pair)`,
          unit: 'msg/s',
          samples: socketMax,
        },
        {
          scenario,
          figure: `Tern socket / bare (${where})`,
          unit: 'x',
          samples: socketMax.map((t, i) => t / bareMax[i]),
          target: { min: RATIO_TARGET },
        },
        { scenario, figure: `Tern HTTP p50 at ${fmt(half)} req/s (half max)`, unit: 'ms', samples: p50 },
        { scenario, figure: `Tern HTTP p99 at ${fmt(half)} req/s (half max)`, unit: 'ms', samples: p99 },
      ] satisfies Row[]
    } finally {
      try {
        for (const server of servers) await server.stop()
      } finally {
        if (pinning) ctx.log(`  ${await pinning.restore()}`)
        for (const db of databases) await db.drop()
        removeDataDir(ternDir)
        removeDataDir(bareDir)
      }
    }
  },
}
