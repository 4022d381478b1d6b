import type { Kysely } from 'kysely'
import { dialectOf, flag, id, ref, timestamp } from './columns.js'

/**
 * Video rooms (the VideoCall and VideoCallParticipant shapes) and per-user RTC settings
 * (RTCSettings). A 1:1 call's room is a room with call_id set. The main service is the record of
 * who is in which room; the video service reports joins, leaves and media state to it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const dialect = dialectOf(db)
  await id(db.schema.createTable('video_calls'), dialect)
    .addColumn('room_id', 'text', (c) => c.notNull().unique())
    .addColumn('creator_id', ref(dialect), (c) => c.notNull().references('users.id'))
    // the 1:1 call this is the room of, if any
    .addColumn('call_id', ref(dialect), (c) => c.references('calls.id'))
    .addColumn('call_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('started_at', timestamp, (c) => c.notNull())
    .addColumn('ended_at', timestamp)
    .addColumn('duration', 'integer')
    // distinct users who ever joined
    .addColumn('participant_count', 'integer', (c) => c.notNull().defaultTo(0))
    // the last join or leave: a room nobody is in ends VIDEO_ROOM_IDLE_SECONDS after it
    .addColumn('last_activity_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('video_calls_status').on('video_calls').columns(['status', 'last_activity_at']).execute()
  await db.schema.createIndex('video_calls_call').on('video_calls').column('call_id').execute()
  await db.schema
    .createTable('video_call_participants')
    .addColumn('call_id', ref(dialect), (c) => c.notNull().references('video_calls.id'))
    .addColumn('user_id', ref(dialect), (c) => c.notNull().references('users.id'))
    .addColumn('joined_at', timestamp, (c) => c.notNull())
    .addColumn('left_at', timestamp)
    .addColumn('audio_only', flag, (c) => c.notNull().defaultTo(0))
    .addColumn('screensharing', flag, (c) => c.notNull().defaultTo(0))
    // signaling sockets of this user in the room now (the video service's joins minus leaves)
    .addColumn('connections', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('video_call_participants_pk', ['call_id', 'user_id'])
    .execute()
  await id(db.schema.createTable('rtc_settings'), dialect)
    .addColumn('user_id', ref(dialect), (c) => c.notNull().unique().references('users.id'))
    .addColumn('stun_server', 'text')
    .addColumn('stun_port', 'integer')
    .addColumn('turn_server', 'text')
    .addColumn('turn_port', 'integer')
    .addColumn('turn_username', 'text')
    .addColumn('turn_credential', 'text')
    .addColumn('enabled', flag, (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rtc_settings').execute()
  await db.schema.dropTable('video_call_participants').execute()
  await db.schema.dropTable('video_calls').execute()
}
