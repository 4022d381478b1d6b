/**
 * PostgreSQL for the scenarios that compare the dialects: a fresh database per scenario next to
 * BENCH_PG_URL (default: the local test database's server), dropped afterwards, and a client on it
 * for seeding. Unreachable: the scenario fails with that reason.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'

export const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

export interface BenchPg {
  /** the fresh database's URL (Tern's DATABASE_URL) */
  url: string
  /** connected to the fresh database; closed by drop() */
  client: pg.Client
  drop(): Promise<void>
}

export async function createPgDatabase(label: string): Promise<BenchPg> {
  const name = `tern_bench_${label.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 5000 })
  await admin.connect().catch((error: unknown) => {
    throw new Error(`PostgreSQL at ${PG_URL} (BENCH_PG_URL) is needed for this scenario: ${String(error)}`)
  })
  try {
    await admin.query(`create database ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(PG_URL)
  url.pathname = `/${name}`
  const client = new pg.Client({ connectionString: url.toString() })
  await client.connect()
  return {
    url: url.toString(),
    client,
    async drop() {
      await client.end().catch(() => {})
      const again = new pg.Client({ connectionString: PG_URL })
      await again.connect()
      try {
        await again.query(`drop database if exists ${name} with (force)`)
      } finally {
        await again.end()
      }
    },
  }
}

/** Inserts `rows` (arrays of values in `columns` order) in multi-row statements of `chunk` rows. */
export async function insertRows(client: pg.Client, table: string, columns: readonly string[], rows: Iterable<unknown[]>, chunk = 1000) {
  let batch: unknown[][] = []
  const flush = async () => {
    if (batch.length === 0) return
    const values = batch.map((_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`).join(', ')
    await client.query(`insert into ${table} (${columns.join(', ')}) values ${values}`, batch.flat())
    batch = []
  }
  for (const row of rows) {
    batch.push(row)
    if (batch.length === chunk) await flush()
  }
  await flush()
}
