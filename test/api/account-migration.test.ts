/**
 * 2026-12-07T18-00-account-lifecycle and 2026-12-07T19-00-email-set-at-from-now: an address set
 * before email_set_at existed counts as set at the upgrade, so an old account that never confirmed
 * its address keeps it for a full UNCONFIRMED_EMAIL_TTL_DAYS; one without an address stays without.
 * Down takes the lifecycle's tables and columns away again.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { migrationDatabase, plantUsers } from '../harness/migrations.js'

const BEFORE = '2026-12-04T21-00-video-call-peers'
const { db, migrator } = await migrationDatabase()

test('old addresses count as set at the upgrade; down removes what the lifecycle added', async () => {
  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  const longAgo = Date.now() - 365 * 86_400_000
  const [withEmail, without] = await plantUsers(db, ['oldmail', 'nomail'], longAgo)
  await db.updateTable('users').set({ email: 'old@example.test' }).where('id', '=', withEmail).execute()
  const started = Date.now()
  assert.equal((await migrator.migrateToLatest()).error, undefined)
  const rows = await db.selectFrom('users').select(['id', 'email_set_at']).where('id', 'in', [withEmail, without]).orderBy('id').execute()
  const byId = new Map(rows.map((r) => [r.id, r.email_set_at === null ? null : Number(r.email_set_at)]))
  assert.ok(byId.get(withEmail)! >= started, 'set at the upgrade, not at sign-up')
  assert.equal(byId.get(without), null)
  // the new tables are there
  await db.insertInto('username_reservations').values({ username_key: 'someone', user_id: without, released_at: Date.now() }).execute()

  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  await assert.rejects(db.selectFrom('username_reservations').selectAll().execute())
  await assert.rejects(db.selectFrom('account_codes').selectAll().execute())
  await assert.rejects(db.selectFrom('users').select('email_set_at').execute())
  // positive control: the rest of the table is intact
  assert.equal(
    (await db.selectFrom('users').select('email').where('id', '=', withEmail).executeTakeFirstOrThrow()).email,
    'old@example.test',
  )
})
