/**
 * 1:1 calls: the lifecycle and the history. A call rings (call.incoming), is answered by the callee
 * (call.answered) and ends (call.ended) — or never is answered: missed when nobody answers in
 * CALL_RING_TIMEOUT_SECONDS (the call-timeouts job), declined when the callee ends it, cancelled
 * when the caller does. Every change and its events commit together; both parties' devices hear
 * each event, so a call answered or ended on one device stops ringing on the others. A user is in
 * at most one call at a time (409: a busy signal).
 */
import type { AppContext } from '../../context.js'
import type { CallRow, CallStatus, CallType, UserRow } from '../../db/tables.js'
import { inTransaction, type Outbox } from '../../events/outbox.js'
import { AppError, conflict, notFound, validationError } from '../../http/errors.js'
import { iso, isoOrNull } from '../../lib/time.js'
import * as blocks from '../../policies/blocks.js'
import { presentPeer } from '../users/index.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'
import * as rooms from './rooms.js'
import type { CallHistoryItem, CallView } from './schemas.js'
import { isUsable } from '../../policies/accounts.js'

/** an answered call still going this long is ended by the job: its devices are surely gone */
const MAX_CALL_MS = 12 * 3600_000
const TIMEOUT_BATCH = 200

/** whole seconds elapsed, as a phone shows a call (a loaded machine between answer and end adds no second) */
const seconds = (ms: number) => Math.max(0, Math.floor(ms / 1000))

/**
 * The busy signal: the callee is in another call. 409 `conflict`, as the error table in
 * docs/api.md has it; a client that is not in a call itself knows that a 409 to its call means
 * the other side is busy, and plays the busy tone.
 */
const busy = (message: string) => conflict(message)

async function present(ctx: AppContext, db: Outbox['db'], call: CallRow): Promise<CallView> {
  const parties = await users.findByIds(db, [call.caller_id, call.receiver_id])
  const byId = new Map(parties.map((u) => [u.id, u]))
  const now = ctx.clock.now()
  return {
    call_id: call.id,
    caller_id: call.caller_id,
    receiver_id: call.receiver_id,
    call_type: call.call_type,
    status: call.status,
    caller: presentPeer(byId.get(call.caller_id)!, now),
    receiver: presentPeer(byId.get(call.receiver_id)!, now),
    created_at: iso(call.created_at),
    answered_at: isoOrNull(call.answered_at),
    ended_at: isoOrNull(call.ended_at),
    duration_seconds: call.duration ?? 0,
  }
}

async function announce(ctx: AppContext, events: Outbox, call: CallRow, name: 'call.incoming' | 'call.answered' | 'call.ended') {
  const view = await present(ctx, events.db, call)
  await events.toUsers([call.caller_id, call.receiver_id], name, { call: view })
  return view
}

/** A call of mine, or 404 (someone else's call is not told apart from no call). */
async function myCall(ctx: AppContext, me: UserRow, id: number): Promise<CallRow> {
  const call = await repo.find(ctx.db, id)
  if (!call || (call.caller_id !== me.id && call.receiver_id !== me.id)) throw notFound('Call not found')
  return call
}

/** Starts a call to `receiverId`: 403 blocked, 404 unknown, 409 `conflict` when I am in a call or they are (busy: they get a missed call). */
export async function start(ctx: AppContext, me: UserRow, receiverId: number, callType: CallType = 'audio'): Promise<CallView> {
  if (receiverId === me.id) throw validationError('You cannot call yourself')
  const receiver = await users.findById(ctx, receiverId)
  if (!receiver || !isUsable(receiver)) throw notFound('User not found')
  if (receiver.is_bot === 1) throw validationError('Bots cannot take calls')
  if (await blocks.hasBlocked(ctx.db, receiverId, me.id)) throw new AppError(403, 'blocked', 'This user does not accept your calls')
  const view = await inTransaction(ctx, async (trx, events) => {
    if (ctx.config.dialect === 'postgres') await repo.lockUsers(trx, [me.id, receiverId])
    if (await repo.liveCallOf(trx, me.id)) throw conflict('You are already in a call')
    if (await repo.liveCallOf(trx, receiverId)) {
      // the busy signal: the callee learns who tried (a missed call in their history and a
      // call.ended "missed" on their devices, as messengers show "missed call while busy")
      const missed = await repo.insertMissed(trx, {
        caller_id: me.id,
        receiver_id: receiverId,
        call_type: callType,
        created_at: events.now,
      })
      await announce(ctx, events, missed, 'call.ended')
      return null
    }
    const call = await repo.insert(trx, { caller_id: me.id, receiver_id: receiverId, call_type: callType, created_at: events.now })
    return announce(ctx, events, call, 'call.incoming')
  })
  // thrown after the commit, so the missed call stays recorded
  if (!view) throw busy('The user is busy in another call')
  return view
}

/** The callee answers a ringing call; anyone else 404 (not their call) or 403 (the caller), a call not ringing 409. */
export async function answer(ctx: AppContext, me: UserRow, id: number): Promise<CallView> {
  const call = await myCall(ctx, me, id)
  if (call.receiver_id !== me.id) throw new AppError(403, 'forbidden', 'Only the callee answers a call')
  if (call.status !== 'ringing') throw conflict(`The call is ${call.status}, not ringing`)
  return inTransaction(ctx, async (_trx, events) => {
    const answered = await repo.transition(events.db, id, ['ringing'], { status: 'answered', answered_at: events.now })
    if (!answered) throw conflict('The call stopped ringing meanwhile')
    return announce(ctx, events, answered, 'call.answered')
  })
}

/** How ending a call in this state by this party turns out. */
function outcome(call: CallRow, byCaller: boolean | null): CallStatus {
  if (call.status === 'answered') return 'ended'
  if (byCaller === null) return 'missed'
  return byCaller ? 'cancelled' : 'declined'
}

async function finish(ctx: AppContext, events: Outbox, call: CallRow, byCaller: boolean | null) {
  const now = events.now
  const status = outcome(call, byCaller)
  const duration = call.answered_at === null ? 0 : seconds(now - call.answered_at)
  const ended = await repo.transition(events.db, call.id, [call.status], { status, ended_at: now, duration })
  if (!ended) return null
  return announce(ctx, events, ended, 'call.ended')
}

/** Either party ends the call: ended (answered), cancelled (caller, ringing), declined (callee, ringing); over already 409. */
export async function end(ctx: AppContext, me: UserRow, id: number): Promise<CallView> {
  const call = await myCall(ctx, me, id)
  if (!repo.LIVE.includes(call.status)) throw conflict(`The call is already ${call.status}`)
  const view = await inTransaction(ctx, async (_trx, events) => {
    const ended = await finish(ctx, events, call, call.caller_id === me.id)
    if (!ended) throw conflict('The call changed meanwhile; try again')
    return ended
  })
  closeRoomSoon(ctx, call)
  return view
}

/**
 * When endTimedOut next has a call to end: the oldest ringing call's ring time-out, or the oldest
 * answered call's safety limit. Null: no call is ringing or going.
 */
export async function nextTimeoutAt(ctx: AppContext): Promise<number | null> {
  const [[ringing], [answered]] = await Promise.all([
    repo.ringingSince(ctx.db, Number.MAX_SAFE_INTEGER, 1),
    repo.answeredSince(ctx.db, Number.MAX_SAFE_INTEGER, 1),
  ])
  const times = [
    ringing ? Number(ringing.created_at) + ctx.config.callRingTimeoutSeconds * 1000 : Infinity,
    answered ? Number(answered.created_at) + MAX_CALL_MS : Infinity,
  ]
  const next = Math.min(...times)
  return Number.isFinite(next) ? next : null
}

/** After a call ended: its room and signaling sockets close too (rooms.closeCallRoom), without holding up the answer. */
function closeRoomSoon(ctx: AppContext, call: CallRow) {
  if (call.status !== 'answered') return
  void rooms
    .closeCallRoom(ctx, call)
    .catch((err: unknown) => ctx.log.warn({ err, callId: call.id }, "could not close an ended call's room"))
}

export async function get(ctx: AppContext, me: UserRow, id: number): Promise<CallView> {
  return present(ctx, ctx.db, await myCall(ctx, me, id))
}

export async function history(
  ctx: AppContext,
  me: UserRow,
  page: number,
  perPage: number,
): Promise<{ items: CallHistoryItem[]; total: number }> {
  const { rows, total } = await repo.history(ctx.db, me.id, page, perPage)
  const peers = new Map(
    (await users.findByIds(ctx.db, [...new Set(rows.map((c) => (c.caller_id === me.id ? c.receiver_id : c.caller_id)))])).map((u) => [
      u.id,
      u,
    ]),
  )
  const now = ctx.clock.now()
  const items = rows.map((call): CallHistoryItem => {
    const outgoing = call.caller_id === me.id
    const peer = presentPeer(peers.get(outgoing ? call.receiver_id : call.caller_id)!, now)
    return {
      call_id: call.id,
      call_type: call.call_type,
      peer: { user_id: peer.user_id, username: peer.username, avatar_url: peer.avatar_url },
      direction: outgoing ? 'outgoing' : 'incoming',
      status: call.status,
      duration_seconds: call.duration ?? 0,
      created_at: iso(call.created_at),
      ended_at: isoOrNull(call.ended_at),
    }
  })
  return { items, total }
}

/**
 * The job: calls ringing longer than the ring time-out end as missed; answered calls past the
 * safety limit end. Each in its own small transaction, so a call answered at the last moment wins
 * (the conditional update finds it no longer ringing).
 */
export async function endTimedOut(ctx: AppContext, signal?: AbortSignal): Promise<{ missed: number; ended: number }> {
  const now = ctx.clock.now()
  let missed = 0
  let ended = 0
  const sweep = async (rows: CallRow[], count: () => void) => {
    for (const call of rows) {
      if (signal?.aborted) return
      const view = await inTransaction(ctx, (_trx, events) => finish(ctx, events, call, null))
      if (!view) continue
      count()
      closeRoomSoon(ctx, call)
    }
  }
  await sweep(await repo.ringingSince(ctx.db, now - ctx.config.callRingTimeoutSeconds * 1000, TIMEOUT_BATCH), () => missed++)
  await sweep(await repo.answeredSince(ctx.db, now - MAX_CALL_MS, TIMEOUT_BATCH), () => ended++)
  return { missed, ended }
}
