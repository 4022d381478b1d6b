import { Type, type Static } from 'typebox'
import { Id, Nullable, PageQuery, Peer, Timestamp } from '../../http/schemas.js'

export const LastMessage = Type.Object({
  message_id: Type.Integer(),
  content: Type.String(),
  sender_id: Type.Integer(),
  timestamp: Timestamp,
  is_read: Type.Boolean(),
})

export const ChatListItem = Type.Object({
  chat_id: Type.Integer(),
  chat_type: Type.Literal('personal'),
  peer: Peer,
  last_message: Nullable(LastMessage),
  unread_count: Type.Integer(),
  is_saved: Type.Boolean(),
})

export const CreateChatBody = Type.Object({ user_id: Id }, { additionalProperties: false })
export type CreateChatBody = Static<typeof CreateChatBody>

export const ChatListQuery = PageQuery
