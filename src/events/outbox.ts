/**
 * The one way a change announces itself: `inTransaction` runs a unit of work in a transaction and
 * gives it an Outbox; what the work logs there is written to the update logs inside the same
 * transaction (so a device that was away replays it), and handed to the fan-out and to in-process
 * listeners only after the commit. A unit of work that throws rolls back and announces nothing.
 */
import type { AppContext } from '../context.js'
import type { Db } from '../db/database.js'
import type { ChatRef } from '../realtime/chat-ref.js'
import { logChat, logUsers } from '../realtime/routing.js'
import type { Delivery } from '../realtime/fanout.js'
import { framesOf, type MessageRef, type Recorded } from '../realtime/updates.js'
import type { CommittedEvent } from './bus.js'
import type { EventName, EventPayload, LoggedEventName } from './map.js'

/** Where a logged chat event landed: its `chat_seq` in a group's or channel's log (null in a personal chat). */
export interface Logged {
  chatSeq: number | null
  /** position of its frames in the outbox (toUsers `before` puts frames ahead of them) */
  at: number
}

export class Outbox {
  private readonly deliveries: Delivery[] = []
  private readonly events: CommittedEvent[] = []

  constructor(
    private readonly ctx: AppContext,
    /** the unit of work's transaction */
    readonly db: Db,
    /** the moment of the change: every event of the unit carries it */
    readonly now: number,
  ) {}

  /** An event of a chat, for everyone in it. `about` names the message a `message.new` is (logged as a reference). */
  async toChat<Name extends LoggedEventName>(
    chat: ChatRef,
    name: Name,
    payload: EventPayload<Name>,
    about: MessageRef | null = null,
  ): Promise<Logged> {
    const at = this.deliveries.length
    const frames = await logChat(this.ctx, this.db, chat, name, payload, this.now, about)
    this.deliveries.push(...frames)
    this.events.push({ name, payload, to: { chatId: chat.id }, at: this.now } as CommittedEvent)
    return { chatSeq: frames[0]?.frame.chat_seq ?? null, at }
  }

  /** An event for some users' own devices, in their update logs; `before` sends it ahead of an earlier chat event. */
  async toUsers<Name extends LoggedEventName>(
    userIds: readonly number[],
    name: Name,
    payload: EventPayload<Name>,
    options: { before?: Logged } = {},
  ) {
    const frames = await logUsers(this.ctx, this.db, [...userIds], name, payload, this.now)
    if (options.before) this.deliveries.splice(options.before.at, 0, ...frames)
    else this.deliveries.push(...frames)
    this.events.push({ name, payload, to: { userIds }, at: this.now } as CommittedEvent)
  }

  /** Hands everything logged to the fan-out, then to listeners: call only once the transaction committed. */
  publish() {
    announce(this.ctx, this.deliveries, this.events)
  }
}

/** Runs `work` in a transaction; its events go out after the commit. */
export async function inTransaction<T>(ctx: AppContext, work: (trx: Db, events: Outbox) => Promise<T>, now = ctx.clock.now()): Promise<T> {
  let outbox: Outbox | undefined
  const result = await ctx.db.transaction().execute((trx) => work(trx, (outbox = new Outbox(ctx, trx, now))))
  outbox?.publish()
  return result
}

/**
 * Updates some path other than the outbox already wrote and committed (the SQLite send fast path
 * writes its update rows with its own statements), announced the same way.
 */
export function announceRecorded<Name extends EventName>(
  ctx: AppContext,
  recorded: Recorded[],
  name: Name,
  payload: EventPayload<Name>,
  chatId: number,
  now: number,
) {
  ctx.fanout.publish(framesOf(recorded, name, payload))
  if (ctx.events.listens(name)) ctx.events.emit([{ name, payload, to: { chatId }, at: now } as CommittedEvent])
}

function announce(ctx: AppContext, deliveries: Delivery[], events: CommittedEvent[]) {
  ctx.fanout.publish(deliveries)
  ctx.events.emit(events)
}
