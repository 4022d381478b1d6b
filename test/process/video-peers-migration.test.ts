/**
 * 2026-12-04T21-00-video-call-peers: a participant's signaling sockets are recorded one row each,
 * so a report counts for its own socket only. Sockets open when the migration runs have no row:
 * their participants keep the count they had, and a leave for one of them still takes it down
 * (rooms.ts, reportFromVideo), until the count is down to the sockets recorded. Down drops the
 * table; the counts stay.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { AppContext } from '../../src/context.js'
import { reportFromVideo } from '../../src/modules/calls/rooms.js'
import { migrationDatabase, plantUsers } from '../harness/migrations.js'

const BEFORE = '2026-12-02T10-00-recent-updates-in-write-order'
const { handle, db, migrator } = await migrationDatabase()

test('sockets open before the migration still count down on their leaves; new ones are counted by peer', async () => {
  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  const now = Date.now()
  const [ann, ben] = await plantUsers(db, ['ann', 'ben'], now)
  const room = await db
    .insertInto('video_calls')
    .values({
      room_id: 'roomroomroomroom',
      creator_id: ann,
      call_id: null,
      call_type: 'video',
      status: 'active',
      started_at: now,
      last_activity_at: now,
      participant_count: 2,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  // ann had two sockets open and ben one when the server stopped for the upgrade
  await db
    .insertInto('video_call_participants')
    .values([
      { call_id: room.id, user_id: ann, joined_at: now, left_at: null, audio_only: 0, screensharing: 0, connections: 2 },
      { call_id: room.id, user_id: ben, joined_at: now, left_at: null, audio_only: 0, screensharing: 0, connections: 1 },
    ])
    .execute()
  assert.equal((await migrator.migrateToLatest()).error, undefined)

  const ctx = { db, clock: { now: () => now }, config: { dialect: handle.dialect } } as unknown as AppContext
  const report = (user_id: number, event: 'join' | 'leave', peer_id: string) =>
    reportFromVideo(ctx, { event, room_id: 'roomroomroomroom', user_id, peer_id, at: now })
  const state = async (user: number) => {
    const row = await db
      .selectFrom('video_call_participants')
      .select(['connections', 'left_at'])
      .where('call_id', '=', room.id)
      .where('user_id', '=', user)
      .executeTakeFirstOrThrow()
    return [row.connections, row.left_at === null ? 'in' : 'left']
  }

  // ann's two old sockets leave: her count goes down by each, then she has left; a third is nobody's
  assert.deepEqual(await report(ann, 'leave', 'old-a1'), { applied: true })
  assert.deepEqual(await state(ann), [1, 'in'])
  assert.deepEqual(await report(ann, 'leave', 'old-a2'), { applied: true })
  assert.deepEqual(await state(ann), [0, 'left'])
  assert.deepEqual(await report(ann, 'leave', 'old-a3'), { applied: false })

  // ben: one old socket and a new one; the new one is recorded, the old one still counted
  assert.deepEqual(await report(ben, 'join', 'new-b1'), { applied: true })
  assert.deepEqual(await state(ben), [2, 'in'])
  assert.deepEqual(await report(ben, 'join', 'new-b1'), { applied: false }, 'the same join twice')
  assert.deepEqual(await report(ben, 'leave', 'new-b1'), { applied: true })
  assert.deepEqual(await state(ben), [1, 'in'])
  assert.deepEqual(await report(ben, 'leave', 'old-b0'), { applied: true }, 'a count above the recorded sockets: the old socket')
  assert.deepEqual(await state(ben), [0, 'left'])
  assert.equal((await db.selectFrom('video_calls').select('status').where('id', '=', room.id).executeTakeFirstOrThrow()).status, 'ended')

  // down and up again
  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  await assert.rejects(
    db
      .selectFrom('video_call_peers' as any)
      .selectAll()
      .execute(),
    /video_call_peers/,
    'the table is gone',
  )
  assert.deepEqual(await state(ben), [0, 'left'])
  assert.equal((await migrator.migrateToLatest()).error, undefined)
  assert.deepEqual(await db.selectFrom('video_call_peers').selectAll().execute(), [])
})
