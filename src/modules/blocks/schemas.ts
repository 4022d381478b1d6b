import { Type } from 'typebox'
import { Id } from '../../http/schemas.js'

export const BlockBody = Type.Object(
  { user_id: Id, reason: Type.Optional(Type.String({ maxLength: 500 })) },
  { additionalProperties: false },
)

export const BlockState = Type.Object({ user_id: Type.Integer(), is_blocked: Type.Boolean() })
