/**
 * Typing indicators: ephemeral frames (no seq, not in the update log). A "typing" that is not
 * refreshed expires: after TYPING_TTL_MS the server itself tells the recipients it stopped, so a
 * client that vanished mid-sentence does not leave "typing…" on screen forever. The timer lives on
 * the instance that received the last update: one that sees a newer typing frame for the same
 * chat and user from another instance (all frames pass through every instance's fan-out) drops
 * its own timer, so a refresh that lands elsewhere never gets a stale "stopped".
 */
import { isPersonal, personalMembers, type ChatRef } from './chat-ref.js'
import type { Delivery, Fanout } from './fanout.js'

export const TYPING_TTL_MS = 5000

export class TypingTracker {
  private timers = new Map<string, NodeJS.Timeout>()
  /** the data objects this instance published: local deliveries hand back the same object */
  private own = new WeakSet<object>()

  constructor(private fanout: Fanout) {
    fanout.subscribe((deliveries) => {
      for (const delivery of deliveries) {
        if (!('frame' in delivery)) continue
        const { frame } = delivery
        if (frame.type !== 'typing' || this.own.has(frame.data as object)) continue
        const { chat_id, user_id } = frame.data as { chat_id: number; user_id: number }
        this.clear(`${chat_id}:${user_id}`)
      }
    })
  }

  private clear(key: string) {
    const timer = this.timers.get(key)
    if (!timer) return
    clearTimeout(timer)
    this.timers.delete(key)
  }

  /** The chat's other members (every subscriber of a group) hear that `userId` is typing. */
  set(chat: ChatRef, userId: number, isTyping: boolean) {
    const key = `${chat.id}:${userId}`
    this.clear(key)
    this.publish(chat, userId, isTyping)
    if (!isTyping) return
    const timer = setTimeout(() => {
      this.timers.delete(key)
      this.publish(chat, userId, false)
    }, TYPING_TTL_MS)
    timer.unref()
    this.timers.set(key, timer)
  }

  private publish(chat: ChatRef, userId: number, isTyping: boolean) {
    const data = { chat_id: chat.id, user_id: userId, is_typing: isTyping }
    this.own.add(data)
    this.fanout.publish(ephemeralToChat(chat, 'typing', data, userId))
  }

  close() {
    for (const timer of this.timers.values()) clearTimeout(timer)
    this.timers.clear()
  }
}

/** An ephemeral frame (typing) for everyone in a chat but `except`: nothing is logged. */
function ephemeralToChat(chat: ChatRef, type: string, data: unknown, except: number): Delivery[] {
  if (!isPersonal(chat)) return [{ chatId: chat.id, frame: { type, chat_id: chat.id, data } }]
  return personalMembers(chat)
    .filter((userId) => userId !== except)
    .map((userId) => ({ userId, frame: { type, data } }))
}
