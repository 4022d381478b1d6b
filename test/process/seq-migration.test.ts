/**
 * 2026-11-21T08-00-sqlite-seq-from-log: on SQLite the per-user seq counter table goes and the log
 * becomes the counter. A database with history must continue every user's seq where it was, and
 * going down must rebuild the counters from the log. (PostgreSQL keeps its counters: the same
 * checks pass there unchanged.)
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { AppContext } from '../../src/context.js'
import { record } from '../../src/realtime/updates.js'
import { migrationDatabase, plantUsers } from '../harness/migrations.js'

const BEFORE = '2026-11-21T07-00-update-refs'
const { handle, db, migrator } = await migrationDatabase()

test('seqs continue from the log after the counters are dropped, and are rebuilt from it going down', async () => {
  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  const now = Date.now()
  const [ann, ben, cy] = await plantUsers(db, ['ann', 'ben', 'cy'], now)
  // ann's log was pruned to its newest three of five; ben has one update; cy none
  await db
    .insertInto('updates')
    .values([3, 4, 5].map((seq) => ({ user_id: ann, seq, type: 'chat.updated', data: '{}', message_id: null, created_at: now })))
    .execute()
  await db
    .insertInto('updates')
    .values({ user_id: ben, seq: 1, type: 'chat.updated', data: '{}', message_id: null, created_at: now })
    .execute()
  await db
    .insertInto('update_seqs')
    .values([
      { user_id: ann, seq: 5 },
      { user_id: ben, seq: 1 },
    ])
    .execute()

  assert.equal((await migrator.migrateToLatest()).error, undefined)
  const ctx = { dialect: handle.dialect, config: { updateLogKeep: 10 } } as AppContext
  const recorded = await db.transaction().execute((trx) => record(ctx, trx, [ann, ben, cy], 'chat.updated', {}, now))
  assert.deepEqual(recorded, [
    { userId: ann, seq: 6 },
    { userId: ben, seq: 2 },
    { userId: cy, seq: 1 },
  ])

  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  const counters = await db.selectFrom('update_seqs').select(['user_id', 'seq']).orderBy('user_id').execute()
  assert.deepEqual(counters, [
    { user_id: ann, seq: 6 },
    { user_id: ben, seq: 2 },
    { user_id: cy, seq: 1 },
  ])
})
