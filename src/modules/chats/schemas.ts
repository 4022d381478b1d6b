import { Type, type Static } from 'typebox'
import { Id, Nullable, PageQuery, Peer, Timestamp } from '../../http/schemas.js'

export const LastMessage = Type.Object({
  message_id: Type.Integer(),
  content: Type.String(),
  sender_id: Type.Integer(),
  /** group and channel items */
  sender_username: Type.Optional(Type.String()),
  timestamp: Timestamp,
  is_read: Type.Boolean(),
})

/** A group's or channel's summary in a chat list item. */
const GroupSummary = Type.Object({ group_id: Type.Integer(), name: Type.String(), avatar_url: Nullable(Type.String()) })
const ChannelSummary = Type.Object({
  channel_id: Type.Integer(),
  name: Type.String(),
  avatar_url: Nullable(Type.String()),
  is_verified: Type.Boolean(),
})

/**
 * The API's chat list item: personal items carry `peer` (and `is_saved`), group items a
 * `group` and channel items a `channel` object. Group and channel items add `my_role` and
 * `chat_seq`, the chat's event log position to resume from (docs/realtime.md).
 */
export const ChatListItem = Type.Object({
  chat_id: Type.Integer(),
  chat_type: Type.Union([Type.Literal('personal'), Type.Literal('group'), Type.Literal('channel')]),
  peer: Type.Optional(Peer),
  group: Type.Optional(GroupSummary),
  channel: Type.Optional(ChannelSummary),
  last_message: Nullable(LastMessage),
  unread_count: Type.Integer(),
  is_saved: Type.Optional(Type.Boolean()),
  my_role: Type.Optional(Type.String()),
  chat_seq: Type.Optional(Type.Integer()),
})

export const CreateChatBody = Type.Object({ user_id: Id }, { additionalProperties: false })
export type CreateChatBody = Static<typeof CreateChatBody>

export const ChatListQuery = Type.Object(
  { ...PageQuery.properties, archived: Type.Boolean({ default: false }) },
  { additionalProperties: false },
)

const ChatType = Type.Union([Type.Literal('personal'), Type.Literal('group'), Type.Literal('channel')], {
  errorMessage: 'chat_type must be personal, group or channel',
})
/** Which chat to pin or archive (JSON body; the DELETE forms take it in the query string too). */
export const PlacementBody = Type.Object({ chat_type: ChatType, chat_id: Id }, { additionalProperties: false })
export const PlacementOptions = Type.Object(
  { chat_type: Type.Optional(ChatType), chat_id: Type.Optional(Id) },
  { additionalProperties: false },
)
export const PinView = Type.Object({ chat_type: ChatType, chat_id: Type.Integer(), pinned_at: Timestamp })
export const ArchiveView = Type.Object({ chat_type: ChatType, chat_id: Type.Integer(), is_archived: Type.Boolean() })

/** A forum topic of a group. */
export const Topic = Type.Object({
  topic_id: Type.Integer(),
  chat_id: Type.Integer(),
  title: Type.String(),
  icon_emoji_id: Nullable(Type.String()),
  created_at: Timestamp,
})
