import assert from 'node:assert/strict'
import test from 'node:test'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { batched, statement } from './sqlite-hot.js'
import type { Database } from './tables.js'

test('a batched write after the database closed fails its own promise, and nothing else', async () => {
  const sqlite = new SQLite(':memory:')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) })
  const hot = { db, sqlite }
  sqlite.exec('create table t (v integer)')
  // positive control: while open, jobs of one turn share a commit and settle with their values
  const written = await Promise.all([1, 2].map((v) => batched(hot, (raw) => statement(raw, 'insert into t (v) values (?)').run(v).changes)))
  assert.deepEqual(written, [1, 1])
  await db.destroy()
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)
  process.on('unhandledRejection', onUnhandled)
  try {
    // as a timer's write (realtime/updates.ts moveRecent) may land after a shutdown
    await assert.rejects(Promise.all([batched(hot, () => 1), batched(hot, () => 2)]))
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(unhandled, [])
  } finally {
    process.off('unhandledRejection', onUnhandled)
  }
})
