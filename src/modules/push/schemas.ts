import { Type, type Static } from 'typebox'
import { Id, Nullable } from '../../http/schemas.js'

export const WebPushSubscription = Type.Object(
  {
    endpoint: Type.String({ minLength: 1, maxLength: 2048 }),
    keys: Type.Object(
      { p256dh: Type.String({ minLength: 1, maxLength: 200 }), auth: Type.String({ minLength: 1, maxLength: 100 }) },
      { additionalProperties: false },
    ),
    /** PushSubscription.toJSON() carries it; not used */
    expirationTime: Type.Optional(Nullable(Type.Number())),
  },
  { additionalProperties: false },
)

export const RegisterBody = Type.Object(
  {
    subscription: Type.Optional(WebPushSubscription),
    /** a native token (FCM registration token, APNs device token) */
    push_token: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        pattern: '^[\\x21-\\x7e]+$',
        errorMessage: 'push_token must be 1 to 4096 printable characters without spaces',
      }),
    ),
    platform: Type.Optional(Type.Union([Type.Literal('fcm'), Type.Literal('apns')], { errorMessage: 'platform must be fcm or apns' })),
  },
  { additionalProperties: false },
)
export type RegisterBody = Static<typeof RegisterBody>

export const UnregisterBody = Type.Object(
  {
    id: Type.Optional(Id),
    endpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    push_token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  },
  { additionalProperties: false },
)
export type UnregisterBody = Static<typeof UnregisterBody>

export const SendBody = Type.Object(
  {
    user_id: Id,
    title: Type.String({ minLength: 1, maxLength: 200 }),
    body: Type.String({ maxLength: 2000 }),
    /** extra data for the client, JSON (at most 2 KiB) */
    data: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown())),
  },
  { additionalProperties: false },
)
export type SendBody = Static<typeof SendBody>

export const Registered = Type.Object({ id: Type.Integer() })
export const Removed = Type.Object({ id: Type.Integer(), removed: Type.Boolean() })
export const PublicKey = Type.Object({ public_key: Type.String() })
export const SendResult = Type.Object({ sent: Type.Integer(), failed: Type.Integer() })
