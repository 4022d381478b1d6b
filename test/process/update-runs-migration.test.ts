/**
 * 2026-12-02T00-00-update-runs: the update log gets `message_ids`, a run of message.new entries in
 * one row (realtime/updates.ts). Going back, every run becomes one row per entry again, in both
 * tables of SQLite's log, so that nothing logged is lost; single rows are left as they were.
 * PostgreSQL never writes runs: there the column comes and goes.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { migrationDatabase, plantUsers } from '../harness/migrations.js'

const BEFORE = '2026-11-29T10-00-recent-updates-keyed'
const { handle, db, migrator } = await migrationDatabase()
const sqlite = handle.dialect === 'sqlite'

const columns = ['user_id', 'seq', 'type', 'data', 'message_id', 'created_at'] as const
const logged = (table: 'updates' | 'recent_updates') => db.selectFrom(table).select(columns).orderBy('user_id').orderBy('seq').execute()

test('runs of message.new go back to one row per entry, single rows stay, and the column comes and goes', async () => {
  assert.equal((await migrator.migrateToLatest()).error, undefined)
  const now = Date.now()
  const [ann, ben] = await plantUsers(db, ['ann', 'ben'], now)
  const single = { type: 'message.new', data: null, message_ids: null, created_at: now }
  await db
    .insertInto('updates')
    .values([
      { ...single, user_id: ann, seq: 1, message_id: 10 },
      // ann's seqs 2-4: messages 11, 13, 14
      { ...single, user_id: ann, seq: 4, message_id: null, message_ids: '[11,13,14]' },
      { user_id: ann, seq: 5, type: 'chat.updated', data: '{"chat_id":1}', message_id: null, message_ids: null, created_at: now },
    ])
    .execute()
  if (sqlite) {
    // ben's seqs 6-7 in the recent log
    await db
      .insertInto('recent_updates')
      .values({ ...single, user_id: ben, seq: 7, message_id: null, message_ids: '[20,21]' })
      .execute()
  }

  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  const entry = (user_id: number, seq: number, message_id: number) => ({
    user_id,
    seq,
    type: 'message.new',
    data: null,
    message_id,
    created_at: now,
  })
  if (sqlite) {
    assert.deepEqual(await logged('updates'), [
      entry(ann, 1, 10),
      entry(ann, 2, 11),
      entry(ann, 3, 13),
      entry(ann, 4, 14),
      { user_id: ann, seq: 5, type: 'chat.updated', data: '{"chat_id":1}', message_id: null, created_at: now },
    ])
    assert.deepEqual(await logged('recent_updates'), [entry(ben, 6, 20), entry(ben, 7, 21)])
  }
  await assert.rejects(db.selectFrom('updates').select('message_ids').execute(), /message_ids/, 'the column is gone')
  assert.equal((await migrator.migrateToLatest()).error, undefined)
  assert.ok(Array.isArray(await db.selectFrom('updates').select('message_ids').execute()), 'and back')
})
