/**
 * 2026-12-02T10-00-recent-updates-in-write-order: on SQLite the recent update log becomes a table
 * in write order (rowids, no key), and each user's latest seq goes back into `update_seqs`, filled
 * from both logs. Rows not yet moved must survive both ways, in each user's seq order; every user
 * with a log must continue from their seq; a log row of a user who is gone gets no counter.
 * PostgreSQL has no recent log and always kept its counters: nothing changes there.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import type { AppContext } from '../../src/context.js'
import { record } from '../../src/realtime/updates.js'
import { migrationDatabase, plantUsers } from '../harness/migrations.js'

const BEFORE = '2026-12-02T00-00-update-runs'
const { handle, db, migrator } = await migrationDatabase()
const skip = handle.dialect !== 'sqlite' && 'SQLite only (PostgreSQL has no recent log and kept update_seqs)'

/** The recent log's definition as SQLite stores it. */
async function definition() {
  const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'recent_updates'`.execute(db)
  return rows[0].sql.toLowerCase()
}
const hasCounters = async () =>
  (await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'table' and name = 'update_seqs'`.execute(db)).rows[0]
    .n === 1

const columns = ['user_id', 'seq', 'type', 'data', 'message_id', 'message_ids', 'created_at'] as const
const logged = () => db.selectFrom('recent_updates').select(columns).orderBy('user_id').orderBy('seq').execute()

test('waiting rows survive both ways in seq order, and the counters continue every log', { skip }, async () => {
  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  assert.ok((await definition()).includes('without rowid'), 'positive control: the keyed table')
  assert.equal(await hasCounters(), false, 'positive control: no counters on SQLite before')
  const now = Date.now()
  const [ann, ben, cy, dee] = await plantUsers(db, ['ann', 'ben', 'cy', 'dee'], now)
  const row = (user_id: number, seq: number, message_id: number | null, message_ids: string | null = null) => ({
    user_id,
    seq,
    type: 'message.new',
    data: null,
    message_id,
    message_ids,
    created_at: now,
  })
  // ann: seqs 1-2 moved, 3 and the run 4-5 waiting; ben: only waiting rows; cy: only moved ones;
  // dee: nothing; and a waiting row of a user deleted outside the server
  await db
    .insertInto('updates')
    .values([row(ann, 1, 10), row(ann, 2, 11), row(cy, 9, 12)])
    .execute()
  const waiting = [row(ben, 7, 20), row(ann, 3, 13), row(ben, 8, 21), row(ann, 5, null, '[14,15]'), row(2_000_000_000, 4, 30)]
  await db.insertInto('recent_updates').values(waiting).execute()
  const byKey = [...waiting].sort((a, b) => a.user_id - b.user_id || a.seq - b.seq)

  assert.equal((await migrator.migrateToLatest()).error, undefined)
  const table = await definition()
  assert.ok(!table.includes('without rowid') && table.includes('id integer primary key'), table)
  assert.deepEqual(await logged(), byKey)
  // each user's rows in seq order by id, as a table written in order holds them
  const ids = await db.selectFrom('recent_updates').select(['id', 'user_id', 'seq']).orderBy('id').execute()
  for (const user of [ann, ben]) {
    const seqs = ids.filter((r) => r.user_id === user).map((r) => r.seq)
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
      `user ${user}'s rows in seq order`,
    )
  }
  const counters = await db.selectFrom('update_seqs').select(['user_id', 'seq']).orderBy('user_id').execute()
  assert.deepEqual(counters, [
    { user_id: ann, seq: 5 },
    { user_id: ben, seq: 8 },
    { user_id: cy, seq: 9 },
  ])
  const ctx = { dialect: handle.dialect, config: { updateLogKeep: 10 } } as AppContext
  const recorded = await db.transaction().execute((trx) => record(ctx, trx, [ann, ben, cy, dee], 'chat.updated', {}, now))
  assert.deepEqual(recorded, [
    { userId: ann, seq: 6 },
    { userId: ben, seq: 9 },
    { userId: cy, seq: 10 },
    { userId: dee, seq: 1 },
  ])

  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  assert.ok((await definition()).includes('without rowid'), 'keyed again')
  assert.equal(await hasCounters(), false, 'the counters are gone: the seq is read off the logs again')
  const chatUpdated = (user_id: number, seq: number) => ({
    user_id,
    seq,
    type: 'chat.updated',
    data: '{}',
    message_id: null,
    message_ids: null,
    created_at: now,
  })
  assert.deepEqual(
    await logged(),
    [...byKey, chatUpdated(ann, 6), chatUpdated(ben, 9), chatUpdated(cy, 10), chatUpdated(dee, 1)].sort(
      (a, b) => a.user_id - b.user_id || a.seq - b.seq,
    ),
  )
})
