import { Type } from 'typebox'
import { Nullable, Timestamp } from '../../http/schemas.js'

export const SessionItem = Type.Object({
  id: Type.Integer(),
  session_token: Type.String({ description: 'masked: the first 6 characters and an ellipsis' }),
  device: Nullable(Type.String()),
  ip_address: Nullable(Type.String()),
  user_agent: Nullable(Type.String()),
  method: Type.String({ description: 'how the session was opened: password, otp, qr, oauth:<provider>' }),
  is_current: Type.Boolean(),
  last_active: Timestamp,
  created_at: Timestamp,
})
