/**
 * Tern's users, chats and messages as the Telegram Bot API's objects. Pure.
 *
 * Chat ids: a personal chat is named by the other member's user id (as in Telegram, where a
 * private chat's id is the user's id), so a bot answers a user at `chat_id = from.id`; a group or a
 * channel is named by the negated Tern chat id (Telegram's groups and channels are negative).
 * Message ids are Tern's message ids (unique platform-wide).
 */
import type { ChatRow } from '../../db/tables.js'

export interface TgUser {
  id: number
  is_bot: boolean
  first_name: string
  username: string
}

export interface TgChat {
  id: number
  type: 'private' | 'group' | 'supergroup' | 'channel'
  title?: string
  username?: string
  first_name?: string
}

export interface TgEntity {
  type: 'bot_command'
  offset: number
  length: number
}

export interface TgMessage {
  message_id: number
  from: TgUser
  chat: TgChat
  date: number
  text?: string
  entities?: TgEntity[]
  /** a message with a file: its text is the caption */
  caption?: string
  caption_entities?: TgEntity[]
  photo?: TgPhotoSize[]
  document?: TgDocument
  edit_date?: number
  reply_to_message?: Omit<TgMessage, 'reply_to_message'>
  reply_markup?: unknown
}

/** file_id is the Tern upload's path; file_unique_id the start of its content hash. */
export interface TgPhotoSize {
  file_id: string
  file_unique_id: string
  width: number
  height: number
  file_size?: number
}

export interface TgDocument {
  file_id: string
  file_unique_id: string
  file_name?: string
  mime_type?: string
  file_size?: number
}

export const tgUser = (user: { id: number; username: string; display_name: string; is_bot: number }): TgUser => ({
  id: user.id,
  is_bot: user.is_bot === 1,
  first_name: user.display_name || user.username,
  username: user.username,
})

/** A private chat as seen by the bot: named after the user on the other side. */
export const tgPrivateChat = (user: { id: number; username: string; display_name: string }): TgChat => ({
  id: user.id,
  type: 'private',
  first_name: user.display_name || user.username,
  username: user.username,
})

/** A group or channel: its negated chat id. */
export const tgGroupChat = (chat: Pick<ChatRow, 'id' | 'chat_type' | 'title'>): TgChat => ({
  id: -chat.id,
  type: chat.chat_type === 'channel' ? 'channel' : 'group',
  title: chat.title ?? '',
})

/** Which Tern chat a Bot API chat_id names: a user (personal chat) or a group/channel. */
export type ChatTarget = { userId: number } | { chatId: number }

export function chatTarget(chatId: number): ChatTarget | null {
  if (!Number.isSafeInteger(chatId) || chatId === 0) return null
  return chatId > 0 ? { userId: chatId } : { chatId: -chatId }
}

/** Epoch ms → Telegram's Unix seconds. */
export const unixSeconds = (ms: number) => Math.floor(ms / 1000)

// `/command` or `/command@botname`, at the start or after whitespace, up to whitespace or the end
const COMMAND = /(^|\s)(\/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?)(?=\s|$)/g

/** The bot_command entities of a text (offsets and lengths in UTF-16 code units, as Telegram's). */
export function commandEntities(text: string): TgEntity[] {
  const entities: TgEntity[] = []
  for (const match of text.matchAll(COMMAND)) {
    entities.push({ type: 'bot_command', offset: match.index + match[1].length, length: match[2].length })
  }
  return entities
}

/** The command a text starts with (`/help@mybot args` → help, mybot), or null. */
export function leadingCommand(text: string): { command: string; botUsername: string | null } | null {
  const match = /^\/([A-Za-z0-9_]{1,64})(?:@([A-Za-z0-9_]{3,32}))?(?=\s|$)/.exec(text)
  return match ? { command: match[1].toLowerCase(), botUsername: match[2] ?? null } : null
}
