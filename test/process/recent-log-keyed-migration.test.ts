/**
 * 2026-11-29T10-00-recent-updates-keyed: on SQLite the recent update log is rebuilt WITHOUT ROWID,
 * keyed by (user_id, seq). Rows not yet moved when the server was upgraded must survive both ways,
 * and the key must hold (one row per user and seq). PostgreSQL has no recent log.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { migrationDatabase, plantUsers } from '../harness/migrations.js'

const BEFORE = '2026-11-29T02-00-recent-updates'
const KEYED = '2026-11-29T10-00-recent-updates-keyed'
const { handle, db, migrator } = await migrationDatabase()
const skip = handle.dialect !== 'sqlite' && 'SQLite only (PostgreSQL has no recent log)'

/** The table's definition as SQLite stores it, and its indexes. */
async function shape() {
  const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'recent_updates'`.execute(db)
  const indexes = await sql<{ name: string }>`select name from pragma_index_list('recent_updates') where origin = 'c'`.execute(db)
  return { definition: rows[0].sql.toLowerCase(), indexes: indexes.rows.map((r) => r.name) }
}

const logged = () =>
  db
    .selectFrom('recent_updates')
    .select(['user_id', 'seq', 'type', 'data', 'message_id', 'created_at'])
    .orderBy('user_id')
    .orderBy('seq')
    .execute()

test('rows waiting in the recent log survive the rebuild up and down, and the key holds', { skip }, async () => {
  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  const before = await shape()
  assert.ok(!before.definition.includes('without rowid'), 'positive control: the old table has rowids')
  const now = Date.now()
  const [ann, ben] = await plantUsers(db, ['ann', 'ben'], now)
  // written in time order (ben, ann, ben), as the recent log receives them
  const rows = [
    { user_id: ben, seq: 7, type: 'message.new', data: null, message_id: 41, created_at: now },
    { user_id: ann, seq: 3, type: 'chat.updated', data: '{"chat_id":1}', message_id: null, created_at: now + 1 },
    { user_id: ben, seq: 8, type: 'message.new', data: null, message_id: 42, created_at: now + 2 },
  ]
  await db.insertInto('recent_updates').values(rows).execute()
  const expected = [rows[1], rows[0], rows[2]]

  assert.equal((await migrator.migrateTo(KEYED)).error, undefined)
  const keyed = await shape()
  assert.ok(keyed.definition.includes('without rowid'), keyed.definition)
  assert.ok(keyed.definition.includes('primary key (user_id, seq)'), keyed.definition)
  assert.deepEqual(await logged(), expected)
  await assert.rejects(
    db
      .insertInto('recent_updates')
      .values({ ...rows[0], message_id: 99 })
      .execute(),
    /UNIQUE|PRIMARY KEY/i,
    'a second row for the same user and seq',
  )

  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  const back = await shape()
  assert.ok(!back.definition.includes('without rowid'), back.definition)
  assert.deepEqual(back.indexes, ['recent_updates_user_seq'])
  assert.deepEqual(await logged(), expected)
})
