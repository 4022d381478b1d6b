/**
 * idle: the CPU an idle server uses, no client connected. A built server starts on a fresh data
 * directory, settles for IDLE_SETTLE_MS, and its CPU time (user + system, every thread, from
 * /proc/<pid>/stat) is read over IDLE_WINDOW_MS: the share of one core it took. On SQLite always;
 * on PostgreSQL + Redis too when BENCH_IDLE_PG=1 (BENCH_PG_URL, BENCH_REDIS_URL).
 */
import fs from 'node:fs'
import { createPgDatabase } from '../lib/pg.js'
import { makeDataDir, removeDataDir, sleep } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, type BenchContext, type Scenario } from '../lib/scenario.js'
import { startServer } from '../lib/server.js'

const IDLE_SETTLE_MS = Number(process.env.BENCH_IDLE_SETTLE_MS || 10_000)
const IDLE_WINDOW_MS = Number(process.env.BENCH_IDLE_WINDOW_MS || 60_000)
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const TICK_MS = 1000 / 100 // USER_HZ

/** CPU time (ms) of a whole process, user + system, from /proc/<pid>/stat. */
function processCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}

/** One idle measurement: the share of a core (in %) the server used over the window. */
async function idleShare(ctx: BenchContext, label: string, env: Record<string, string>): Promise<number> {
  const dataDir = makeDataDir(`idle-${label}`)
  const server = await startServer(ctx.machine, 'tern', dataDir, { env: { LOG_LEVEL: 'warn', ...env } })
  try {
    await sleep(IDLE_SETTLE_MS)
    const before = processCpuMs(server.pid)
    const started = performance.now()
    await sleep(IDLE_WINDOW_MS)
    const used = processCpuMs(server.pid) - before
    const share = (used / (performance.now() - started)) * 100
    ctx.log(`  ${label}: ${fmt(used)} ms of CPU in ${fmt(IDLE_WINDOW_MS / 1000)} s idle: ${share.toFixed(2)} % of a core`)
    return share
  } finally {
    await server.stop()
    removeDataDir(dataDir)
  }
}

export const idle: Scenario = {
  name: 'idle',
  summary: `CPU of a server with no clients, over ${fmt(IDLE_WINDOW_MS / 1000)} s after ${fmt(IDLE_SETTLE_MS / 1000)} s (SQLite; PostgreSQL + Redis with BENCH_IDLE_PG=1)`,
  async run(ctx) {
    const scenario = this.name
    const sqlite: number[] = []
    for (let run = 1; run <= ctx.runs; run++) sqlite.push(await idleShare(ctx, 'sqlite', {}))
    const rows: Row[] = [{ scenario, figure: 'idle CPU, SQLite', unit: '%', samples: sqlite, target: { max: 0.3 } }]
    if (process.env.BENCH_IDLE_PG === '1') {
      const pg: number[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        const db = await createPgDatabase('idle')
        try {
          pg.push(await idleShare(ctx, 'pg', { DATABASE_URL: db.url, REDIS_URL, REDIS_PREFIX: `tern_bench_idle_${run}_${process.pid}:` }))
        } finally {
          await db.drop()
        }
      }
      rows.push({ scenario, figure: 'idle CPU, PostgreSQL + Redis', unit: '%', samples: pg, target: { max: 0.3 } })
    }
    return rows
  },
}
