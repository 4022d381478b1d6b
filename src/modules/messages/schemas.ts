import { Type, type Static } from 'typebox'
import { Id, Nullable, Timestamp } from '../../http/schemas.js'
import { IdempotencyHeaders } from '../../http/idempotency.js'

export const MAX_CONTENT = 4096

export const SendMessageBody = Type.Object(
  {
    chat_id: Type.Optional(Id),
    receiver_id: Type.Optional(Id),
    content: Type.Optional(Type.String({ maxLength: MAX_CONTENT })),
    reply_to_id: Type.Optional(Id),
    file_path: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    scheduled_at: Type.Optional(Timestamp),
    client_message_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    is_encrypted: Type.Optional(Type.Boolean()),
    encrypted_content: Type.Optional(Type.String({ maxLength: 65_536 })),
    encryption_key_id: Type.Optional(Type.String({ maxLength: 128 })),
    emoji: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    emoji_file: Type.Optional(Type.String({ maxLength: 255 })),
    emoji_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 })),
    emoji_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    /** a topic of a forum group */
    topic_id: Type.Optional(Id),
  },
  { additionalProperties: false },
)
export type SendMessageBody = Static<typeof SendMessageBody>

export const SendHeaders = IdempotencyHeaders

/** The API's Message (V2) shape, plus chat_id and the opaque encryption fields. */
export const MessageView = Type.Object({
  /** null while the message is pending (scheduled): it gets its id when it is sent */
  message_id: Nullable(Type.Integer()),
  chat_id: Type.Integer(),
  sender_id: Type.Integer(),
  receiver_id: Nullable(Type.Integer()),
  sender_username: Type.String(),
  sender_avatar_url: Nullable(Type.String()),
  content: Type.String(),
  reply_to_id: Nullable(Type.Integer()),
  forwarded_from: Nullable(Type.String()),
  file_path: Nullable(Type.String()),
  file_url: Nullable(Type.String()),
  file_type: Nullable(Type.String()),
  is_read: Type.Boolean(),
  /** first time another member read it */
  read_at: Nullable(Timestamp),
  /** first time a recipient's device received it */
  delivered_at: Nullable(Timestamp),
  timestamp: Timestamp,
  edited_at: Nullable(Timestamp),
  is_encrypted: Type.Boolean(),
  encrypted_content: Nullable(Type.String()),
  encryption_key_id: Nullable(Type.String()),
  emoji: Nullable(Type.String()),
  emoji_file: Nullable(Type.String()),
  emoji_url: Nullable(Type.String()),
  emoji_size: Nullable(Type.Integer()),
  emoji_count: Nullable(Type.Integer()),
  reactions: Type.Record(Type.String(), Type.Integer()),
  client_message_id: Nullable(Type.String()),
  /** the forum topic, in a group in forum mode */
  topic_id: Nullable(Type.Integer()),
  /** a poll (GET V2/poll/{id}/results) */
  poll_id: Nullable(Type.Integer()),
  /** relayed by a bot from another messenger (a bridge), with that messenger's message id */
  is_from_external: Type.Boolean(),
  external_message_id: Nullable(Type.String()),
  /** pending (scheduled) messages only: the id POST messages/{id}/scheduled takes, never a message id */
  scheduled_id: Type.Optional(Type.Integer()),
  scheduled_at: Type.Optional(Timestamp),
  is_scheduled: Type.Optional(Type.Boolean()),
})
export type MessageView = Static<typeof MessageView>

const { message_id: _id, scheduled_id: _sid, scheduled_at: _s, is_scheduled: _p, ...messageFields } = MessageView.properties

/** The richer helper variant: `id` for `message_id`, plus the materialized reply and attachment fields. */
export const RichMessageView = Type.Object({
  id: Type.Integer(),
  ...messageFields,
  timestamp_formatted: Type.String({ description: 'HH:MM (UTC)' }),
  is_own: Type.Boolean(),
  reply_to_content: Nullable(Type.String()),
  reply_to_sender: Nullable(Type.String()),
  has_attachment: Type.Boolean(),
  file_name: Type.Optional(Nullable(Type.String())),
  file_size: Type.Optional(Nullable(Type.Integer())),
  formatted_size: Type.Optional(Nullable(Type.String())),
  thumbnail_path: Type.Optional(Nullable(Type.String())),
  preview_size: Type.Optional(Nullable(Type.String())),
})
export type RichMessageView = Static<typeof RichMessageView>

export const EditBody = Type.Object({ content: Type.String({ maxLength: MAX_CONTENT }) }, { additionalProperties: false })

export const DeleteOptions = Type.Object({ for_all: Type.Optional(Type.Boolean()) }, { additionalProperties: false })
export const DeleteResult = Type.Object({ message_id: Type.Integer(), deleted_for_all: Type.Boolean() })

export const ReadResult = Type.Object({
  chat_id: Type.Integer(),
  message_id: Type.Integer(),
  read_at: Timestamp,
  unread_count: Type.Integer(),
})

export const ReactionBody = Type.Object({ emoji: Nullable(Type.String({ minLength: 1, maxLength: 32 })) }, { additionalProperties: false })
/** docs/api.md: the answer is the message's `reactions` map (emoji → count) */
export const ReactionResult = Type.Record(Type.String(), Type.Integer())

export const ScheduleBody = Type.Object(
  {
    scheduled_at: Type.Optional(Nullable(Timestamp)),
    cancel: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export type ScheduleBody = Static<typeof ScheduleBody>
export const CancelResult = Type.Object({ scheduled_id: Type.Integer(), cancelled: Type.Literal(true) })

export const ForwardBody = Type.Object({ message_id: Id, target_chat_id: Id }, { additionalProperties: false })

export const TypingBody = Type.Object({ chat_id: Id, is_typing: Type.Boolean() }, { additionalProperties: false })

export const ChatQuery = Type.Object({ chat_id: Id }, { additionalProperties: false })

export const HistoryQuery = Type.Object(
  {
    chat_id: Id,
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    before_id: Type.Optional(Id),
    after_id: Type.Optional(Id),
    /** one forum topic's messages */
    topic_id: Type.Optional(Id),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    format: Type.Optional(Type.Union([Type.Literal('v2'), Type.Literal('rich')], { errorMessage: 'format must be v2 or rich' })),
  },
  { additionalProperties: false },
)
export type HistoryQuery = Static<typeof HistoryQuery>

/** History answers a page (with page fields) or a keyset slice (items only), in either shape. */
export const HistoryResult = Type.Object({
  success: Type.Literal(true),
  items: Type.Array(Type.Union([MessageView, RichMessageView])),
  page: Type.Optional(Type.Integer()),
  per_page: Type.Optional(Type.Integer()),
  total: Type.Optional(Type.Integer()),
  pages: Type.Optional(Type.Integer()),
})
