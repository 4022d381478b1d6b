/**
 * search: GET V2/search/global among 1,000,000 users: a selective query (one username and its
 * ten longer neighbours), a broad one (3 characters every user matches) and a 2-character prefix,
 * one request at a time. Broad queries are bounded: a search looks at 1,000 matches of each kind.
 * `search-pg` measures the same on PostgreSQL (pg_trgm and text_pattern_ops; target: no worse
 * than 2x SQLite's 10 ms).
 */
import { registerMany, V2, type BenchUser } from '../lib/api.js'
import { createPgDatabase } from '../lib/pg.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, serviceTime, type BenchContext, type Scenario } from '../lib/scenario.js'
import { insertUsers, openTernDb } from '../lib/seed.js'
import { startServer, type Server } from '../lib/server.js'

const USERS = 1_000_000

export const search: Scenario = {
  name: 'search',
  summary: `search/global among ${fmt(USERS)} users: a selective query (p50 target), a broad one and a 2-character prefix`,
  async run(ctx) {
    const dataDir = makeDataDir('search')
    let server = await startServer(ctx.machine, 'tern', dataDir)
    try {
      const [me] = await registerMany(server.url, 'searcher', 1)
      await server.stop()
      const seeding = Date.now()
      const db = openTernDb(dataDir)
      // usernames member_0 … member_999999, display names "member 0" …: the FTS index follows by trigger
      insertUsers(db, 'member', USERS - 1, me.id)
      db.close()
      ctx.log(`  seeded ${fmt(USERS)} users in ${fmt((Date.now() - seeding) / 1000, 1)} s`)
      server = await startServer(ctx.machine, 'tern', dataDir)
      return await measure(ctx, this.name, server, me, { max: 10 })
    } finally {
      await server.stop()
      removeDataDir(dataDir)
    }
  },
}

export const searchPg: Scenario = {
  name: 'search-pg',
  summary: `search/global among ${fmt(USERS)} users on PostgreSQL (BENCH_PG_URL): the same queries; target no worse than 2x SQLite's`,
  async run(ctx) {
    const dataDir = makeDataDir('search-pg')
    const database = await createPgDatabase('search')
    let server: Server | null = null
    try {
      const env = { DATABASE_URL: database.url }
      server = await startServer(ctx.machine, 'tern', dataDir, { env })
      const [me] = await registerMany(server.url, 'searcher', 1)
      await server.stop()
      const seeding = Date.now()
      await database.client.query(
        `insert into users (username, display_name, password_hash, created_at)
         select 'member_' || i, 'member ' || i, (select password_hash from users where id = $1), $2 from generate_series(0, $3) as i`,
        [me.id, Date.now(), USERS - 2],
      )
      // settled as autovacuum leaves a table: GIN pending lists merged, statistics current
      await database.client.query('vacuum analyze users')
      ctx.log(`  seeded ${fmt(USERS)} users on PostgreSQL in ${fmt((Date.now() - seeding) / 1000, 1)} s`)
      server = await startServer(ctx.machine, 'tern', dataDir, { env })
      return await measure(ctx, this.name, server, me, { max: 20 })
    } finally {
      await server?.stop()
      await database.drop()
      removeDataDir(dataDir)
    }
  },
}

async function measure(ctx: BenchContext, scenario: string, server: Server, me: BenchUser, target: { max: number }): Promise<Row[]> {
  const queries = { selective: 'member_12345', broad: 'mem', prefix: 'me' }
  const p50 = { selective: [] as number[], broad: [] as number[], prefix: [] as number[] }
  for (let run = 1; run <= ctx.runs; run++) {
    for (const [key, q] of Object.entries(queries) as [keyof typeof queries, string][]) {
      const request = {
        method: 'GET' as const,
        path: `${V2}/search/global?q=${encodeURIComponent(q)}&per_page=20`,
        headers: { authorization: `Bearer ${me.token}` },
      }
      p50[key].push((await serviceTime(ctx, server.port, `search ${key}`, [request])).latency.p50)
    }
    ctx.log(
      `  run ${run}: ${Object.entries(p50)
        .map(([key, values]) => `${key} ${fmt(values.at(-1)!, 2)} ms`)
        .join(', ')}`,
    )
  }
  return [
    { scenario, figure: `"${queries.selective}" among ${fmt(USERS)} users (11 matches), p50`, unit: 'ms', samples: p50.selective, target },
    { scenario, figure: `"${queries.broad}" (every user matches; 1,000 looked at per kind), p50`, unit: 'ms', samples: p50.broad },
    { scenario, figure: `"${queries.prefix}" (2 characters: prefixes only), p50`, unit: 'ms', samples: p50.prefix },
  ]
}
