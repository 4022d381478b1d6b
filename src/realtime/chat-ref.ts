/** Which chat an event belongs to, and who a personal chat's members are. */
import type { ChatRow } from '../db/tables.js'

export type ChatRef = Pick<ChatRow, 'id' | 'chat_type' | 'peer1_id' | 'peer2_id'>

export const isPersonal = (chat: Pick<ChatRow, 'chat_type'>) => chat.chat_type === 'personal'

/** The members of a personal chat (one for Saved Messages). */
export function personalMembers(chat: ChatRef): number[] {
  return [...new Set([chat.peer1_id!, chat.peer2_id!])]
}
