/**
 * Bots in the app: which users are bots (learned from the chat list, member lists and search), the
 * inline keyboard a bot sent with a message (GET messages/{id}/buttons, fetched for bots' messages
 * only, again when the bot edits the message), pressing a callback button (POST
 * messages/{id}/callback); the bot's answer (`bot.callback_answer`) is shown by the gateway as a notice.
 */
import { signal } from '@preact/signals'
import { api, data, items, type Answered } from './api'

export type Keyboard = NonNullable<Answered<'/api.v2/api/messages/{id}/buttons', 'get'>['data']['inline_keyboard']>

/** user ids known to be bots */
export const botIds = signal<ReadonlySet<number>>(new Set())

export function learnBots(users: readonly { user_id: number; is_bot?: boolean }[]) {
  const found = users.filter((u) => u.is_bot && !botIds.value.has(u.user_id))
  if (found.length) botIds.value = new Set([...botIds.value, ...found.map((u) => u.user_id)])
}

/** message id → its keyboard (null: none); a new Map on every change */
export const keyboards = signal<Map<number, Keyboard | null>>(new Map())
const asking = new Set<number>()

export async function ensureKeyboard(messageId: number, again = false) {
  if ((!again && keyboards.value.has(messageId)) || asking.has(messageId)) return
  asking.add(messageId)
  try {
    const answer = await data(api.GET('/api.v2/api/messages/{id}/buttons', { params: { path: { id: messageId } } }))
    keyboards.value = new Map(keyboards.value).set(messageId, answer.inline_keyboard)
  } finally {
    asking.delete(messageId)
  }
}

/** A bot edited its message: its keyboard may have changed. */
export function messageEdited(messageId: number, senderId: number) {
  if (botIds.value.has(senderId) && keyboards.value.has(messageId)) void ensureKeyboard(messageId, true).catch(() => {})
}

/** Presses a callback button; the bot's answer comes later as `bot.callback_answer`. */
export async function press(messageId: number, callbackData: string) {
  await data(api.POST('/api.v2/api/messages/{id}/callback', { params: { path: { id: messageId } }, body: { data: callbackData } }))
}

const groupsAsked = new Set<number>()
/** A group's bots (its members that are bots), asked once per group the app opens. */
export async function learnGroupBots(chatId: number) {
  if (groupsAsked.has(chatId)) return
  groupsAsked.add(chatId)
  learnBots(await items(api.GET('/api.v2/api/groups/members', { params: { query: { chat_id: chatId, per_page: 100 } } })))
}
