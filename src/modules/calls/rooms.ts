/**
 * Video rooms in the main service (docs/calls.md): the record of rooms and their participants.
 * A user joins over HTTP and gets a short-lived ticket for the video service's signaling socket;
 * the video service reports the sockets' joins, leaves and media state back (reportFromVideo).
 * A room ends when its last participant leaves, or when nobody has been connected for
 * VIDEO_ROOM_IDLE_SECONDS (the video-room-idle job). A 1:1 call's room is `call-<id>`, open to
 * its two parties while the call is answered.
 */
import { randomBytes } from 'node:crypto'
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import { isPostgres } from '../../db/dialect.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { CallType, RtcSettingsRow, UserRow, VideoCallRow } from '../../db/tables.js'
import { conflict, forbidden, notFound, rateLimitedFor } from '../../http/errors.js'
import { iso, isoOrNull } from '../../lib/time.js'
import { windowCounts } from '../../lib/window-counts.js'
import { iceConfig, type IceConfig, type IceServer } from '../../video/ice.js'
import { videoSecret } from '../../video/secret.js'
import { signTicket } from '../../video/ticket.js'
import * as users from '../users/index.js'
import * as callRepo from './repo.js'
import type { ParticipantView, RoomView, TicketView, VideoReport } from './rooms-schemas.js'
import { dropFromRoom, signalingUrl } from './video-client.js'
import { usableAccount } from '../../policies/accounts.js'

const IDLE_BATCH = 200
const seconds = (ms: number) => Math.max(0, Math.round(ms / 1000))

function present(room: VideoCallRow): RoomView {
  return {
    id: room.id,
    room_id: room.room_id,
    creator_id: room.creator_id,
    call_id: room.call_id,
    call_type: room.call_type,
    status: room.status,
    started_at: iso(room.started_at),
    ended_at: isoOrNull(room.ended_at),
    duration: room.duration ?? 0,
    participant_count: room.participant_count,
  }
}

const findRoom = (db: Db, roomId: string) => db.selectFrom('video_calls').selectAll().where('room_id', '=', roomId).executeTakeFirst()

/** A room the user may see: any room by its (unguessable) id, a call's room only for its parties. */
async function visibleRoom(ctx: AppContext, me: UserRow, roomId: string): Promise<VideoCallRow> {
  const room = await findRoom(ctx.db, roomId)
  if (!room) throw notFound('Room not found')
  if (room.call_id !== null) {
    const call = await callRepo.find(ctx.db, room.call_id)
    if (!call || (call.caller_id !== me.id && call.receiver_id !== me.id)) throw notFound('Room not found')
  }
  return room
}

export async function create(ctx: AppContext, me: UserRow, callType: CallType = 'video'): Promise<RoomView> {
  const now = ctx.clock.now()
  const room = await ctx.db
    .insertInto('video_calls')
    .values({
      room_id: randomBytes(12).toString('base64url'),
      creator_id: me.id,
      call_id: null,
      call_type: callType,
      status: 'active',
      started_at: now,
      last_activity_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return present(room)
}

export async function get(ctx: AppContext, me: UserRow, roomId: string): Promise<RoomView> {
  return present(await visibleRoom(ctx, me, roomId))
}

/*
 * Locks: every transaction that writes a room's participants or peers takes the room's row first
 * (an update of it, or lockRoom), so two of them (a join and a report, a leave and the idle job)
 * always lock in one order and never deadlock on PostgreSQL.
 */

/** The room's row, locked for this transaction on PostgreSQL (SQLite has one writer at a time). */
function lockRoom(trx: Db, roomId: string): Promise<VideoCallRow | undefined> {
  const query = trx.selectFrom('video_calls').selectAll().where('room_id', '=', roomId)
  return (isPostgres(trx) ? query.forUpdate() : query).executeTakeFirst()
}

/** Ends the room if nobody is in it any more; answers the room as it is now. The room's row is locked. */
async function endIfEmpty(db: Db, room: VideoCallRow, now: number): Promise<VideoCallRow> {
  if (room.status !== 'active') return room
  const present = await db
    .selectFrom('video_call_participants')
    .select('user_id')
    .where('call_id', '=', room.id)
    .where('left_at', 'is', null)
    .limit(1)
    .executeTakeFirst()
  if (present) return room
  return (await endRoom(db, room, now)) ?? room
}

/**
 * Ends an active room (its row first: the lock), everyone in it leaving; undefined if it had
 * ended. Its participant_count stays: every join that added a participant counted it.
 */
async function endRoom(db: Db, room: VideoCallRow, now: number): Promise<VideoCallRow | undefined> {
  const ended = await db
    .updateTable('video_calls')
    .set({ status: 'ended', ended_at: now, duration: seconds(now - room.started_at), last_activity_at: now })
    .where('id', '=', room.id)
    .where('status', '=', 'active')
    .returningAll()
    .executeTakeFirst()
  if (!ended) return undefined
  await db
    .updateTable('video_call_participants')
    .set({ left_at: now, connections: 0 })
    .where('call_id', '=', room.id)
    .where('left_at', 'is', null)
    .execute()
  await db.deleteFrom('video_call_peers').where('call_id', '=', room.id).execute()
  return ended
}

/** The ICE servers for a user: their own (RTCSettings, when enabled) first, then the service's STUN and TURN. */
export function withUserServers(config: IceConfig, settings: RtcSettingsRow | undefined): IceConfig {
  if (settings?.enabled !== 1) return config
  const own: IceServer[] = []
  const host = (name: string) => (name.includes(':') && !name.startsWith('[') ? `[${name}]` : name)
  if (settings.stun_server) own.push({ urls: [`stun:${host(settings.stun_server)}:${settings.stun_port ?? 3478}`] })
  if (settings.turn_server) {
    own.push({
      urls: [`turn:${host(settings.turn_server)}:${settings.turn_port ?? 3478}`],
      ...(settings.turn_username ? { username: settings.turn_username } : {}),
      ...(settings.turn_credential ? { credential: settings.turn_credential } : {}),
    })
  }
  return { ...config, ice_servers: [...own, ...config.ice_servers] }
}

export const rtcSettingsOf = (db: Db, userId: number) =>
  db.selectFrom('rtc_settings').selectAll().where('user_id', '=', userId).executeTakeFirst()

/** Who asks for a ticket: where the video service reports back, and the session the ticket belongs to (it ends with it). */
export interface TicketRequest {
  callbackUrl: string
  sessionId: number
}

/** Counts a ticket asked for by the user against VIDEO_TICKET_RATE_LIMIT (shared through Redis with REDIS_URL); 429 over it. */
async function countTicket(ctx: AppContext, userId: number): Promise<void> {
  const wait = await windowCounts(ctx, 'video-tickets').take(String(userId), ctx.config.videoTicketRateLimit)
  if (wait !== null) throw rateLimitedFor(wait)
}

/** Records the user in the room and issues the ticket for its signaling. */
async function admit(ctx: AppContext, me: UserRow, room: VideoCallRow, audioOnly: boolean, issue: TicketRequest): Promise<TicketView> {
  if (room.status !== 'active') throw conflict('The room has ended')
  const now = ctx.clock.now()
  const admitted = await ctx.db.transaction().execute(async (trx) => {
    // the room may end meanwhile: take it only while still active
    const live = await trx
      .updateTable('video_calls')
      .set({ last_activity_at: now })
      .where('id', '=', room.id)
      .where('status', '=', 'active')
      .returningAll()
      .executeTakeFirst()
    if (!live) throw conflict('The room has ended')
    const existing = await trx
      .selectFrom('video_call_participants')
      .selectAll()
      .where('call_id', '=', room.id)
      .where('user_id', '=', me.id)
      .executeTakeFirst()
    if (existing) {
      await trx
        .updateTable('video_call_participants')
        .set({ audio_only: audioOnly ? 1 : 0, ...(existing.left_at !== null ? { joined_at: now, left_at: null, screensharing: 0 } : {}) })
        .where('call_id', '=', room.id)
        .where('user_id', '=', me.id)
        .execute()
      return live
    }
    await trx
      .insertInto('video_call_participants')
      .values({ call_id: room.id, user_id: me.id, joined_at: now, left_at: null, audio_only: audioOnly ? 1 : 0 })
      .execute()
    return trx
      .updateTable('video_calls')
      .set((eb) => ({ participant_count: eb('participant_count', '+', 1) }))
      .where('id', '=', room.id)
      .returningAll()
      .executeTakeFirstOrThrow()
  })
  const expires = now + ctx.config.videoTicketTtlSeconds * 1000
  const ticket = signTicket(videoSecret(ctx.config), {
    room: room.room_id,
    uid: me.id,
    username: me.username,
    exp: expires,
    audio_only: audioOnly,
    cb: issue.callbackUrl,
    sid: issue.sessionId,
  })
  return {
    room_id: room.room_id,
    ticket,
    expires_at: iso(expires),
    signaling_url: signalingUrl(ctx),
    ice: withUserServers(iceConfig(ctx.config, me.id, now), await rtcSettingsOf(ctx.db, me.id)),
    room: present(admitted),
  }
}

export async function join(ctx: AppContext, me: UserRow, roomId: string, audioOnly: boolean, issue: TicketRequest): Promise<TicketView> {
  await countTicket(ctx, me.id)
  const room = await visibleRoom(ctx, me, roomId)
  if (room.call_id !== null) {
    const call = await callRepo.find(ctx.db, room.call_id)
    if (call?.status !== 'answered') throw conflict(`The call is ${call?.status ?? 'gone'}`)
  }
  return admit(ctx, me, room, audioOnly, issue)
}

/** A ticket for a 1:1 call's room (`call-<id>`): its two parties, while the call is answered. */
export async function callTicket(
  ctx: AppContext,
  me: UserRow,
  callId: number,
  audioOnly: boolean | undefined,
  issue: TicketRequest,
): Promise<TicketView> {
  await countTicket(ctx, me.id)
  const call = await callRepo.find(ctx.db, callId)
  if (!call || (call.caller_id !== me.id && call.receiver_id !== me.id)) throw notFound('Call not found')
  if (call.status !== 'answered') throw conflict(`The call is ${call.status}, not answered`)
  const roomId = `call-${call.id}`
  let room = await findRoom(ctx.db, roomId)
  if (!room) {
    const now = ctx.clock.now()
    try {
      room = await ctx.db
        .insertInto('video_calls')
        .values({
          room_id: roomId,
          creator_id: call.caller_id,
          call_id: call.id,
          call_type: call.call_type,
          status: 'active',
          started_at: now,
          last_activity_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
    } catch (error) {
      // the other party's request made it first
      if (!isUniqueViolation(error)) throw error
      room = (await findRoom(ctx.db, roomId))!
    }
  }
  return admit(ctx, me, room, audioOnly ?? call.call_type === 'audio', issue)
}

/**
 * A 1:1 call ended: its room (`call-<id>`, if either party joined it) ends with it, and both
 * parties' signaling sockets in it are closed (dropFromRoom), so the media session ends even if a
 * client does not hang up by itself. Runs after the call's end committed; a video service that is
 * away is logged by dropFromRoom, and the room's record ends regardless.
 */
export async function closeCallRoom(ctx: AppContext, call: { id: number; caller_id: number; receiver_id: number }): Promise<void> {
  const room = await findRoom(ctx.db, `call-${call.id}`)
  if (!room) return
  if (room.status === 'active') await ctx.db.transaction().execute((trx) => endRoom(trx, room, ctx.clock.now()))
  await Promise.all([call.caller_id, call.receiver_id].map((userId) => dropFromRoom(ctx, room.room_id, userId)))
}

/** Leaves a room: recorded here, then the user's signaling sockets in it are closed (dropFromRoom; the leave stands if the video service is away). */
export async function leave(ctx: AppContext, me: UserRow, roomId: string): Promise<RoomView> {
  const room = await visibleRoom(ctx, me, roomId)
  const now = ctx.clock.now()
  const view = present(
    await ctx.db.transaction().execute(async (trx) => {
      const live = await trx
        .updateTable('video_calls')
        .set({ last_activity_at: now })
        .where('id', '=', room.id)
        .returningAll()
        .executeTakeFirstOrThrow()
      const left = await trx
        .updateTable('video_call_participants')
        .set({ left_at: now, connections: 0, screensharing: 0 })
        .where('call_id', '=', room.id)
        .where('user_id', '=', me.id)
        .where('left_at', 'is', null)
        .returning('user_id')
        .executeTakeFirst()
      if (!left) throw conflict(live.status === 'active' ? 'You are not in this room' : 'The room has ended')
      await trx.deleteFrom('video_call_peers').where('call_id', '=', room.id).where('user_id', '=', me.id).execute()
      return endIfEmpty(trx, live, now)
    }),
  )
  await dropFromRoom(ctx, room.room_id, me.id)
  return view
}

export async function participants(ctx: AppContext, me: UserRow, roomId: string): Promise<ParticipantView[]> {
  const room = await visibleRoom(ctx, me, roomId)
  const rows = await ctx.db
    .selectFrom('video_call_participants')
    .selectAll()
    .where('call_id', '=', room.id)
    .orderBy('joined_at')
    .orderBy('user_id')
    .execute()
  const names = new Map(
    (
      await users.findByIds(
        ctx.db,
        rows.map((r) => r.user_id),
      )
    ).map((u) => [u.id, u.username]),
  )
  return rows.map((row) => ({
    user_id: row.user_id,
    username: names.get(row.user_id) ?? '',
    joined_at: iso(row.joined_at),
    left_at: isoOrNull(row.left_at),
    audio_only: row.audio_only === 1,
    screensharing: row.screensharing === 1,
    connected: row.connections > 0,
  }))
}

/** Whether the session is still good: active, not expired, its user active. */
async function sessionActive(ctx: AppContext, userId: number, sessionId: number): Promise<boolean> {
  const found = await ctx.db
    .selectFrom('user_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select('s.id')
    .where('s.id', '=', sessionId)
    .where('s.user_id', '=', userId)
    .where('s.is_active', '=', 1)
    .where('s.last_activity', '>', ctx.clock.now() - ctx.config.sessionTtlDays * 86_400_000)
    .where(usableAccount('u'))
    .executeTakeFirst()
  return found !== undefined
}

/**
 * A report from the video service (already authenticated by its signature): a socket joined or
 * left, or changed its media state. Reports for an ended room or a user not admitted change nothing.
 * A join or media report from a socket whose session has ended is refused with 403 (the video
 * service then closes that socket); media reports over VIDEO_MEDIA_REPORT_RATE_LIMIT per
 * participant are refused with 429 and not written. A leave is always taken.
 */
export async function reportFromVideo(ctx: AppContext, report: VideoReport): Promise<{ applied: boolean }> {
  if (report.event === 'media') {
    const wait = await windowCounts(ctx, 'video-media-reports').take(
      `${report.room_id}:${report.user_id}`,
      ctx.config.videoMediaReportRateLimit,
    )
    if (wait !== null) throw rateLimitedFor(wait)
  }
  if (report.event !== 'leave' && report.session_id !== undefined && !(await sessionActive(ctx, report.user_id, report.session_id))) {
    throw forbidden('The session this socket was opened with has ended')
  }
  const now = ctx.clock.now()
  return ctx.db.transaction().execute(async (trx) => {
    const room = await lockRoom(trx, report.room_id)
    if (room?.status !== 'active') return { applied: false }
    const row = await trx
      .selectFrom('video_call_participants')
      .selectAll()
      .where('call_id', '=', room.id)
      .where('user_id', '=', report.user_id)
      .executeTakeFirst()
    if (!row) return { applied: false }
    const participant = trx.updateTable('video_call_participants').where('call_id', '=', room.id).where('user_id', '=', report.user_id)

    if (report.event === 'join') {
      const added = await trx
        .insertInto('video_call_peers')
        .values({ call_id: room.id, peer_id: report.peer_id, user_id: report.user_id })
        .onConflict((oc) => oc.columns(['call_id', 'peer_id']).doNothing())
        .executeTakeFirst()
      // the same join delivered twice
      if (!Number(added.numInsertedOrUpdatedRows ?? 0)) return { applied: false }
      const connections = (row.left_at === null ? row.connections : 0) + 1
      await participant.set({ connections, left_at: null, ...(row.left_at !== null ? { joined_at: now } : {}) }).execute()
      await trx.updateTable('video_calls').set({ last_activity_at: now }).where('id', '=', room.id).execute()
      return { applied: true }
    }
    if (row.left_at !== null) return { applied: false }
    if (report.event === 'media') {
      const open = await trx
        .selectFrom('video_call_peers')
        .select('peer_id')
        .where('call_id', '=', room.id)
        .where('peer_id', '=', report.peer_id)
        .where('user_id', '=', report.user_id)
        .executeTakeFirst()
      if (!open) return { applied: false }
      await participant.set({ screensharing: report.media?.screenshare ? 1 : 0 }).execute()
      return { applied: true }
    }
    const removed = await trx
      .deleteFrom('video_call_peers')
      .where('call_id', '=', room.id)
      .where('peer_id', '=', report.peer_id)
      .where('user_id', '=', report.user_id)
      .executeTakeFirst()
    if (!Number(removed.numDeletedRows)) {
      // no such socket now: one of an earlier stay in the room, or a leave delivered twice; but a
      // count above the sockets recorded counts sockets opened before they were (the migration)
      const recorded = await trx
        .selectFrom('video_call_peers')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('call_id', '=', room.id)
        .where('user_id', '=', report.user_id)
        .executeTakeFirstOrThrow()
      if (row.connections <= Number(recorded.n)) return { applied: false }
    }
    const connections = Math.max(0, row.connections - 1)
    await participant.set(connections === 0 ? { connections, left_at: now, screensharing: 0 } : { connections }).execute()
    await trx.updateTable('video_calls').set({ last_activity_at: now }).where('id', '=', room.id).execute()
    if (connections === 0) await endIfEmpty(trx, room, now)
    return { applied: true }
  })
}

/**
 * When endIdleRooms next has a room to end: now for the room of a call that is over, else when the
 * longest-empty room has been idle for VIDEO_ROOM_IDLE_SECONDS. Null: no active room is empty.
 */
export async function nextIdleAt(ctx: AppContext): Promise<number | null> {
  const over = await ctx.db
    .selectFrom('video_calls')
    .innerJoin('calls', 'calls.id', 'video_calls.call_id')
    .select('video_calls.id')
    .where('video_calls.status', '=', 'active')
    .where('calls.status', '!=', 'answered')
    .limit(1)
    .executeTakeFirst()
  if (over) return ctx.clock.now()
  const empty = await ctx.db
    .selectFrom('video_calls')
    .select('last_activity_at')
    .where('status', '=', 'active')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('video_call_participants as p')
            .select('p.user_id')
            .whereRef('p.call_id', '=', 'video_calls.id')
            .where('p.connections', '>', 0),
        ),
      ),
    )
    .orderBy('last_activity_at')
    .limit(1)
    .executeTakeFirst()
  return empty ? Number(empty.last_activity_at) + ctx.config.videoRoomIdleSeconds * 1000 + 1 : null
}

/** The job: active rooms with nobody connected and no join or leave for VIDEO_ROOM_IDLE_SECONDS end, and the rooms of calls that are over. */
export async function endIdleRooms(ctx: AppContext, signal?: AbortSignal): Promise<{ ended: number }> {
  const now = ctx.clock.now()
  const idle = await ctx.db
    .selectFrom('video_calls')
    .selectAll()
    .where('status', '=', 'active')
    .where('last_activity_at', '<', now - ctx.config.videoRoomIdleSeconds * 1000)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('video_call_participants as p')
            .select('p.user_id')
            .whereRef('p.call_id', '=', 'video_calls.id')
            .where('p.connections', '>', 0),
        ),
      ),
    )
    .orderBy('last_activity_at')
    .limit(IDLE_BATCH)
    .execute()
  // a 1:1 call's room ends with its call, whoever is still connected
  const overCalls = await ctx.db
    .selectFrom('video_calls')
    .innerJoin('calls', 'calls.id', 'video_calls.call_id')
    .selectAll('video_calls')
    .where('video_calls.status', '=', 'active')
    .where('calls.status', '!=', 'answered')
    .limit(IDLE_BATCH)
    .execute()
  let ended = 0
  for (const room of [...idle, ...overCalls.filter((r) => !idle.some((i) => i.id === r.id))]) {
    if (signal?.aborted) break
    if (await ctx.db.transaction().execute((trx) => endRoom(trx, room, now))) ended++
  }
  return { ended }
}

export async function getRtcSettings(ctx: AppContext, me: UserRow) {
  const row = await rtcSettingsOf(ctx.db, me.id)
  return {
    stun_server: row?.stun_server ?? null,
    stun_port: row?.stun_port ?? null,
    turn_server: row?.turn_server ?? null,
    turn_port: row?.turn_port ?? null,
    turn_username: row?.turn_username ?? null,
    has_turn_credential: Boolean(row?.turn_credential),
    enabled: row?.enabled === 1,
  }
}

export async function updateRtcSettings(
  ctx: AppContext,
  me: UserRow,
  changes: Partial<{
    stun_server: string | null
    stun_port: number | null
    turn_server: string | null
    turn_port: number | null
    turn_username: string | null
    turn_credential: string | null
    enabled: boolean
  }>,
) {
  const now = ctx.clock.now()
  const { enabled, ...rest } = changes
  const values = { ...rest, ...(enabled === undefined ? {} : { enabled: enabled ? 1 : 0 }), updated_at: now }
  await ctx.db
    .insertInto('rtc_settings')
    .values({ user_id: me.id, ...values })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(values))
    .execute()
  return getRtcSettings(ctx, me)
}
