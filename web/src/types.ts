/**
 * The API shapes the app uses, taken from the typed client (client/, generated from the server's
 * own /openapi.json and /asyncapi.json): a change of the server's schemas that the app does not
 * follow fails the type-check. Only `Msg` is the app's own: a message as the app keeps it.
 */
import type { GatewayFrames } from '@tern/client'
import type { Answered } from './api'

/** the signed-in user (GET /api/web/session) */
export type Session = Answered<'/api/web/session', 'get'>['data']
export type User = Session['user']
/** a user as lists show them (search, members): user_id, names, avatar, presence */
export type Peer = Answered<'/api.v2/api/search/global', 'get'>['items'][number]
export type Member = Answered<'/api.v2/api/groups/members', 'get'>['items'][number]

export type ChatListItem = Answered<'/api.v2/api/chat_list', 'get'>['items'][number] & {
  /** kept by the app from GET pins / archive */
  is_pinned?: boolean
  is_archived?: boolean
}
export type ChatType = ChatListItem['chat_type']

/**
 * A message as the API answers it: sends, edits, search and live events give the plain view;
 * history with `format: "rich"` the rich one (`id`, the replied message, the file's name and size).
 */
export type MessageView = Answered<'/api.v2/api/chat/history', 'get'>['items'][number] | GatewayFrames['message.new']['data']['message']
export type RichMessage = Extract<MessageView, { id: number }>

export type Group = Answered<'/api.v2/api/groups/info', 'get'>['data']
export type Channel = Answered<'/api.v2/api/channels/info', 'get'>['data']
export type UploadedFile = Answered<'/files/upload', 'post'>['data']

/** A message as the app keeps it. */
export interface Msg {
  id: number
  chat_id: number
  sender_id: number
  sender_username: string
  content: string
  reply_to_id: number | null
  reply_to_content: string | null
  reply_to_sender: string | null
  forwarded_from: string | null
  file_url: string | null
  file_type: string | null
  file_name: string | null
  file_size: number | null
  thumbnail_url: string | null
  is_read: boolean
  delivered: boolean
  timestamp: string
  edited_at: string | null
  reactions: Record<string, number>
  /** the emoji I reacted with (the API gives counts only; the app remembers its own) */
  my_reaction: string | null
  client_message_id: string | null
  /** a poll posted as this message (polls.ts) */
  poll_id: number | null
  deleted: boolean
}
