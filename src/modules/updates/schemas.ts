import { Type } from 'typebox'
import { Id } from '../../http/schemas.js'

export const UpdatesQuery = Type.Object(
  {
    since: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'the last seq the client has seen' }),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  },
  { additionalProperties: false },
)

export const UpdateItem = Type.Object({
  type: Type.String(),
  seq: Type.Integer(),
  data: Type.Object({}, { additionalProperties: true }),
})

export const ChatUpdatesQuery = Type.Object(
  {
    chat_id: Id,
    since: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      default: 0,
      description: 'the last chat_seq the client has seen in this chat',
    }),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  },
  { additionalProperties: false },
)
