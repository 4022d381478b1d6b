/**
 * Opens Kysely over better-sqlite3 (embedded default) or pg (scale-out). Both return identical
 * rows: ids and counts come back as JS numbers (pg's int8 parser is registered here), flags as 0/1.
 */
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { Kysely, PostgresDialect, SqliteDialect, type KyselyConfig } from 'kysely'
import { sqlitePath, type Dialect } from '../config.js'
import { startCheckpointer } from './checkpointer.js'
import { namingClient, StatementNames } from './pg-prepared.js'
import { statement } from './sqlite-hot.js'
import type { Database } from './tables.js'

export type Db = Kysely<Database>

export interface DatabaseHandle {
  db: Db
  dialect: Dialect
  /** the raw better-sqlite3 connection (sqlite only), for statements that must be prepared once */
  sqlite: SQLite.Database | null
  /**
   * A second, query-only connection to the same file (sqlite only). It sees committed data only
   * and never waits for Kysely's connection, so hot reads that need no transaction (who a token
   * belongs to) run on it synchronously, even while a transaction holds the main connection.
   */
  reader: SQLite.Database | null
  /** the pg pool (postgres only), for its figures in /metrics */
  pool: pg.Pool | null
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** a query slower than this is handed to onSlowQuery (with its SQL text, never its parameters) */
  slowQueryMs?: number
  onSlowQuery?: (sql: string, milliseconds: number) => void
}

/** Kysely's log hook, only when someone wants slow queries: it costs two clock reads per query. */
function slowQueryLog({ slowQueryMs, onSlowQuery }: DatabaseOptions): KyselyConfig['log'] {
  if (!onSlowQuery || slowQueryMs === undefined) return undefined
  return (event) => {
    if (event.queryDurationMillis >= slowQueryMs) onSlowQuery(event.query.sql, event.queryDurationMillis)
  }
}

const INT8_OID = 20
const NUMERIC_OID = 1700
pg.types.setTypeParser(INT8_OID, (value) => Number(value))
pg.types.setTypeParser(NUMERIC_OID, (value) => Number(value))

/**
 * Kysely prepares every query it runs; preparing costs more than running a small statement, so
 * prepared statements are kept by SQL text (see sqlite-hot.ts). Statements run synchronously, so
 * sharing one is safe.
 */
function withStatementCache(sqlite: SQLite.Database) {
  return { close: () => sqlite.close(), prepare: (sql: string) => statement(sqlite, sql) }
}

/** the main connection's page cache, in KiB */
const SQLITE_CACHE_KIB = 32 * 1024

/**
 * The database and its WAL and shared-memory files are the server user's alone (0600): main.ts
 * sets the umask so new files are, and this also closes files an earlier version made readable.
 */
export function keepPrivate(file: string) {
  for (const name of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      fs.chmodSync(name, 0o600)
    } catch {
      // absent (no WAL yet), or not ours to change: nothing to close
    }
  }
}

export function createDatabase(databaseUrl: string, options: DatabaseOptions = {}): DatabaseHandle {
  const log = slowQueryLog(options)
  if (databaseUrl.startsWith('sqlite:')) {
    const file = sqlitePath(databaseUrl)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const sqlite = new SQLite(file)
    sqlite.pragma('journal_mode = WAL')
    keepPrivate(file)
    sqlite.pragma('synchronous = NORMAL')
    sqlite.pragma('foreign_keys = ON')
    sqlite.pragma('busy_timeout = 5000')
    // SQLite's default page cache is 2 MiB: a busy server's hot index pages (every chat's and
    // update log's insertion point, the auth reads) outgrow it, and each miss is a read through
    // the OS. 32 MiB keeps them.
    sqlite.pragma(`cache_size = -${SQLITE_CACHE_KIB}`)
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }), log })
    const reader = new SQLite(file)
    reader.pragma('query_only = ON')
    reader.pragma('busy_timeout = 5000')
    const checkpointer = startCheckpointer(sqlite, file, (during) => db.connection().execute(during))
    const close = async () => {
      await checkpointer.close()
      reader.close()
      await db.destroy()
    }
    return { db, dialect: 'sqlite', sqlite, reader, pool: null, close }
  }
  // hot statements are prepared once per connection (pg-prepared.ts)
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 20, Client: namingClient(new StatementNames()) })
  // A client that loses its connection (a PostgreSQL restart, a terminated backend) must not crash
  // the process: idle ones are replaced by the pool; one checked out between two queries of a
  // transaction fails its next query, which the caller sees as an ordinary error.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log })
  return { db, dialect: 'postgres', sqlite: null, reader: null, pool, close: () => db.destroy() }
}
