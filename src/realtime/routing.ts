/**
 * Where a chat's events go. A personal chat's events go to each of its two members' update logs
 * (their `seq`); a group's or channel's go once into the chat's own log, and reach members through
 * their sockets' subscription to the chat, whatever the member count (docs/realtime.md).
 *
 * `logChat` runs inside the change's transaction and returns the deliveries to publish after it
 * commits. Modules log through the typed outbox (events/outbox.ts), which calls these.
 */
import type { AppContext } from '../context.js'
import type { Db } from '../db/database.js'
import { isPersonal, personalMembers, type ChatRef } from './chat-ref.js'
import * as chatLog from './chat-log.js'
import type { Delivery } from './fanout.js'
import * as updates from './updates.js'

/**
 * Logs one event of a chat for everyone in it; returns the live deliveries. An event about one
 * message (`message.new`) may name it: the members' logs then keep a reference to the message,
 * not a copy of `data` (a chat's own log keeps the copy: one row, whatever the member count).
 */
export async function logChat(
  ctx: AppContext,
  db: Db,
  chat: ChatRef,
  type: string,
  data: unknown,
  now: number,
  about: updates.MessageRef | null = null,
): Promise<Delivery[]> {
  if (isPersonal(chat)) {
    const recorded = await updates.record(ctx, db, personalMembers(chat), type, data, now, about)
    return updates.framesOf(recorded, type, data)
  }
  return [chatLog.deliveryOf(await chatLog.append(db, chat.id, type, data, now, ctx.config.updateLogKeep))]
}

/** Logs one event for some users only (their own devices), in their per-user logs. */
export async function logUsers(ctx: AppContext, db: Db, userIds: number[], type: string, data: unknown, now: number): Promise<Delivery[]> {
  return updates.framesOf(await updates.record(ctx, db, userIds, type, data, now), type, data)
}
