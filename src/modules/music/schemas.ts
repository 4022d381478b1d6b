import { Type } from 'typebox'
import { Id, Nullable, Timestamp } from '../../http/schemas.js'

export const Track = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  file_url: Type.String(),
  file_name: Type.String(),
  artist: Type.String(),
  title: Type.String(),
  duration: Nullable(Type.Integer()),
  source_message_id: Nullable(Type.Integer()),
  added_at: Timestamp,
})

export const AddTrack = Type.Object(
  {
    file_url: Type.String({ minLength: 1, maxLength: 300 }),
    artist: Type.String({ minLength: 1, maxLength: 255 }),
    title: Type.String({ minLength: 1, maxLength: 255 }),
    file_name: Type.Optional(Type.String({ maxLength: 255 })),
    /** seconds */
    duration: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
    source_message_id: Type.Optional(Id),
  },
  { additionalProperties: false },
)

export const RemoveTrack = Type.Object({ id: Type.Optional(Id) }, { additionalProperties: false })
