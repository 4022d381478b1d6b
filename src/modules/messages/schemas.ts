import { Type, type Static } from 'typebox'
import { Id, Nullable, Timestamp } from '../../http/schemas.js'

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
  },
  { additionalProperties: false },
)
export type SendMessageBody = Static<typeof SendMessageBody>

export const SendHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
})

/** The interface's Message (V2) shape, plus chat_id and the opaque encryption fields. */
export const MessageView = Type.Object({
  message_id: Type.Integer(),
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
})
export type MessageView = Static<typeof MessageView>

export const HistoryQuery = Type.Object(
  {
    chat_id: Id,
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    before_id: Type.Optional(Id),
    after_id: Type.Optional(Id),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
)
export type HistoryQuery = Static<typeof HistoryQuery>
