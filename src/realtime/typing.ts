/**
 * Typing indicators: ephemeral frames (no seq, not in the update log). A "typing" that is not
 * refreshed expires: after TYPING_TTL_MS the server itself tells the recipients it stopped, so a
 * client that vanished mid-sentence does not leave "typing…" on screen forever.
 */
import type { Fanout } from './fanout.js'

export const TYPING_TTL_MS = 5000

export class TypingTracker {
  private timers = new Map<string, NodeJS.Timeout>()

  constructor(private fanout: Fanout) {}

  set(chatId: number, userId: number, isTyping: boolean, recipients: number[]) {
    const key = `${chatId}:${userId}`
    clearTimeout(this.timers.get(key))
    this.timers.delete(key)
    this.publish(chatId, userId, isTyping, recipients)
    if (!isTyping) return
    const timer = setTimeout(() => {
      this.timers.delete(key)
      this.publish(chatId, userId, false, recipients)
    }, TYPING_TTL_MS)
    timer.unref()
    this.timers.set(key, timer)
  }

  private publish(chatId: number, userId: number, isTyping: boolean, recipients: number[]) {
    const data = { chat_id: chatId, user_id: userId, is_typing: isTyping }
    this.fanout.publish(recipients.map((recipient) => ({ userId: recipient, frame: { type: 'typing', data } })))
  }

  close() {
    for (const timer of this.timers.values()) clearTimeout(timer)
    this.timers.clear()
  }
}
