/**
 * The API shapes the app uses (docs/api.md, /openapi.json). Hand-written for the fields the app
 * reads; when the generated client (client/) lands these become aliases of its types.
 */
export interface User {
  id: number
  username: string
  display_name: string
  avatar_url?: string | null
  bio?: string
  email?: string | null
}

export interface Session {
  user: User
  csrf_token: string
}

export interface Peer {
  user_id: number
  username: string
  display_name: string
  avatar_url: string | null
  is_online: boolean
  last_seen: string | null
  status_emoji?: string
  is_bot?: boolean
}

export type ChatType = 'personal' | 'group' | 'channel'

export interface LastMessage {
  message_id: number
  content: string
  sender_id: number
  sender_username?: string
  timestamp: string
  is_read: boolean
}

export interface ChatListItem {
  chat_id: number
  chat_type: ChatType
  peer?: Peer
  group?: { group_id: number; name: string; avatar_url: string | null }
  channel?: { channel_id: number; name: string; avatar_url: string | null; is_verified: boolean }
  last_message: LastMessage | null
  unread_count: number
  is_saved?: boolean
  my_role?: string
  chat_seq?: number
  /** kept by the app from GET pins / archive */
  is_pinned?: boolean
  is_archived?: boolean
}

/** V2 MessageView, and the rich history variant (`id`, reply preview, attachment fields). */
export interface MessageView {
  message_id: number | null
  id?: number
  chat_id: number
  sender_id: number
  receiver_id: number | null
  sender_username: string
  content: string
  reply_to_id: number | null
  forwarded_from: string | null
  file_path: string | null
  file_url: string | null
  file_type: string | null
  is_read: boolean
  read_at: string | null
  delivered_at: string | null
  timestamp: string
  edited_at: string | null
  reactions: Record<string, number>
  client_message_id: string | null
  poll_id: number | null
  reply_to_content?: string | null
  reply_to_sender?: string | null
  file_name?: string | null
  file_size?: number | null
  formatted_size?: string | null
  thumbnail_path?: string | null
  preview_size?: string | null
}

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
  deleted: boolean
}

export interface Group {
  group_id: number
  name: string
  description: string | null
  avatar_url: string | null
  owner_id: number
  is_public: boolean
  invite_link: string | null
  member_count: number
  my_role: string | null
  chat_seq?: number
}

export interface Channel {
  channel_id: number
  name: string
  description: string | null
  is_public: boolean
  invite_link: string | null
  subscriber_count: number
  is_subscribed?: boolean
  my_role?: string | null
  chat_seq?: number
}

export interface Member extends Peer {
  role: string
  joined_at: string
}

export interface UploadedFile {
  id: number
  path: string
  url: string
  size: number
  mime_type: string
  file_name: string
  file_type: string
  thumbnail_url: string | null
  width: number | null
  height: number | null
}

export interface Envelope<T> {
  success: boolean
  data?: T
  items?: T
  error?: { code: string; message: string }
  page?: number
  pages?: number
  total?: number
}
