import type { Kysely } from 'kysely'
import { dialectOf, ref } from './columns.js'

/**
 * The signaling sockets a participant has in a room now, one row for each, named by the peer id
 * the video service gave it. `video_call_participants.connections` is their count. Before this a
 * report only moved that count, so a leave reported for a socket of an earlier stay (one that
 * arrived after the user had left over HTTP and joined again), or a report delivered twice,
 * counted against the sockets of the stay that is going on.
 *
 * Sockets open when this runs have no row; their participants keep the count they had, and the
 * main service reads a leave for them by the count as before (rooms.ts, reportFromVideo).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db)
  await db.schema
    .createTable('video_call_peers')
    .addColumn('call_id', ref(dialect), (c) => c.notNull().references('video_calls.id'))
    .addColumn('peer_id', 'text', (c) => c.notNull())
    .addColumn('user_id', ref(dialect), (c) => c.notNull().references('users.id'))
    .addPrimaryKeyConstraint('video_call_peers_pk', ['call_id', 'peer_id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('video_call_peers').execute()
}
