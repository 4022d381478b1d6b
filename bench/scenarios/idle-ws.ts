/**
 * idle-ws: server memory per idle authenticated WebSocket. One process may hold at most 20,000
 * open files here, so the server holds CONNECTIONS (one user and session each) and the figure is
 * projected to 50,000: RSS at 0 + per-connection × 50,000. A bare `ws` server is measured the
 * same way for reference. Clients are split over two load processes and four source addresses.
 */
import { registerMany, V2 } from '../lib/api.js'
import { LoadProcess } from '../lib/load.js'
import { makeDataDir, removeDataDir, sleep } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, type BenchContext, type Scenario } from '../lib/scenario.js'
import { insertSessions, insertUsers, openTernDb } from '../lib/seed.js'
import { startServer, type Server, type ServerKind } from '../lib/server.js'
import { median } from '../lib/stats.js'
import type { IdleWsSpec } from '../load/idle-ws.js'

/** what one server process can hold under the 20,000 open-files limit, with room for its own files */
const CONNECTIONS = Number(process.env.BENCH_IDLE_WS || 19_000)
if (!Number.isInteger(CONNECTIONS) || CONNECTIONS < 100) throw new Error('BENCH_IDLE_WS must be an integer of at least 100')
const PROJECTED = 50_000
const LOAD_PROCESSES = 2
const SOURCES_PER_MEASUREMENT = 4
const MiB = 1024 * 1024

/**
 * Fresh loopback source addresses for each measurement: the closed connections of an earlier
 * one linger in TIME_WAIT on their ports, and binding around them makes connecting crawl.
 */
let sourceBlock = 0
function freshSources(): string[] {
  sourceBlock++
  return Array.from({ length: SOURCES_PER_MEASUREMENT }, (_, i) => `127.1.${sourceBlock}.${i + 1}`)
}

/** The median of a few RSS readings over `ms`, so one GC moment does not decide the figure. */
async function settledRss(server: Server, ms = 3000): Promise<number> {
  const readings: number[] = []
  for (let t = 0; t < ms; t += 500) {
    await sleep(500)
    readings.push(server.rss())
  }
  return median(readings)
}

interface Measured {
  rss0: number
  perConnection: number
}

/** Starts a server, reads its idle RSS, opens `count` connections, reads it again. */
async function measure(ctx: BenchContext, kind: ServerKind, dataDir: string, tokens?: string[]): Promise<Measured> {
  const server = await startServer(ctx.machine, kind, dataDir)
  const loads: LoadProcess[] = []
  try {
    const url = `ws://127.0.0.1:${server.port}${kind === 'tern' ? `${V2}/ws` : '/'}`
    const localAddresses = freshSources()
    const spec = (from: number, count: number): IdleWsSpec => ({
      url,
      count,
      tokens: tokens?.slice(from, from + count),
      localAddresses,
      concurrency: 200,
    })
    // A first few connections load and compile the code paths, which belong to the baseline.
    const warm = LoadProcess.start(ctx.machine, 'idle-ws')
    await warm.request(spec(0, 50))
    await warm.close()
    const rss0 = await settledRss(server)

    const share = Math.ceil(CONNECTIONS / LOAD_PROCESSES)
    const started = Date.now()
    for (let i = 0; i < LOAD_PROCESSES; i++) loads.push(LoadProcess.start(ctx.machine, 'idle-ws'))
    await Promise.all(loads.map((load, i) => load.request(spec(i * share, Math.min(share, CONNECTIONS - i * share)))))
    const opening = (Date.now() - started) / 1000
    const rssN = await settledRss(server)
    const perConnection = (rssN - rss0) / CONNECTIONS
    ctx.log(
      `  ${kind}: ${fmt(CONNECTIONS)} opened in ${fmt(opening, 1)} s; RSS ${fmt(rss0 / MiB)} → ${fmt(rssN / MiB)} MiB, ${fmt(perConnection / 1024, 1)} KiB per connection`,
    )
    return { rss0, perConnection }
  } finally {
    for (const load of loads) await load.close()
    await server.stop()
  }
}

export const idleWs: Scenario = {
  name: 'idle-ws',
  summary: `RSS per idle authenticated WebSocket at ${fmt(CONNECTIONS)}, projected to ${fmt(PROJECTED)}; bare ws for reference`,
  async run(ctx) {
    const dataDir = makeDataDir('idle-ws')
    const bareDir = makeDataDir('idle-ws-bare')
    try {
      // One real account made through the API; CONNECTIONS more users, each with a session, seeded.
      const server = await startServer(ctx.machine, 'tern', dataDir)
      const [template] = await registerMany(server.url, 'idle', 1)
      await server.stop()
      const db = openTernDb(dataDir)
      const tokens = insertSessions(db, insertUsers(db, 'idler', CONNECTIONS, template.id))
      db.close()

      const tern: Measured[] = []
      const bare: Measured[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        tern.push(await measure(ctx, 'tern', dataDir, tokens))
        bare.push(await measure(ctx, 'bare-ws', bareDir))
      }
      const scenario = this.name
      const at = `at ${fmt(CONNECTIONS)} connections`
      return [
        { scenario, figure: 'Tern RSS with no connections', unit: 'MiB', samples: tern.map((m) => m.rss0 / MiB) },
        { scenario, figure: `Tern RSS per connection, ${at}`, unit: 'KiB', samples: tern.map((m) => m.perConnection / 1024) },
        {
          scenario,
          figure: `Tern RSS projected to ${fmt(PROJECTED)} connections`,
          unit: 'MiB',
          samples: tern.map((m) => (m.rss0 + m.perConnection * PROJECTED) / MiB),
          target: { max: 1024 },
        },
        { scenario, figure: `bare ws RSS per connection, ${at}`, unit: 'KiB', samples: bare.map((m) => m.perConnection / 1024) },
      ] satisfies Row[]
    } finally {
      removeDataDir(dataDir)
      removeDataDir(bareDir)
    }
  },
}
