import { Type } from 'typebox'
import { FullPeer, Nullable } from '../../http/schemas.js'
import { PHONE_INPUT_MAX } from '../../lib/phone.js'

/** Bio length for everyone, and with Tern Premium (as Telegram: 70 and 140). */
export const BIO_MAX = 70
export const BIO_MAX_PREMIUM = 140

const AudienceSchema = Type.Union([Type.Literal('everyone'), Type.Literal('contacts'), Type.Literal('nobody')], {
  errorMessage: 'must be everyone, contacts or nobody',
})

/** Another user's profile as I see it (their privacy decides presence, avatar and phone). */
export const ProfileView = Type.Object({
  ...FullPeer.properties,
  link: Nullable(Type.String()),
  /** E.164, only when their privacy shows it to me */
  phone: Nullable(Type.String()),
  /** they are in my contacts */
  is_contact: Type.Boolean(),
})

export const ProfileParams = Type.Object({ username: Type.String({ minLength: 1, maxLength: 64 }) })

export const ProfileUpdate = Type.Object(
  {
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    bio: Type.Optional(Type.String({ maxLength: BIO_MAX_PREMIUM })),
    /** the path of an image I uploaded (POST /files/upload); null removes the avatar */
    avatar: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    /** one of GET V2/avatars/preloaded, instead of an upload */
    preloaded_avatar: Type.Optional(Type.String({ maxLength: 64 })),
    /** with a country code or in PHONE_DEFAULT_REGION's format; stored as E.164; null or "" removes it */
    phone: Type.Optional(Nullable(Type.String({ maxLength: PHONE_INPUT_MAX }))),
    /** one emoji; "" removes it */
    status_emoji: Type.Optional(Type.String({ maxLength: 32 })),
    /** an http(s) URL; null or "" removes it */
    link: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
  },
  { additionalProperties: false },
)

export const PrivacyView = Type.Object({
  /** who sees when I was last seen and whether I am online */
  last_seen: AudienceSchema,
  /** who sees my phone number and may find me by it (contacts/import) */
  phone: AudienceSchema,
  /** who sees my avatar */
  avatar: AudienceSchema,
})

export const PrivacyUpdate = Type.Partial(PrivacyView, { additionalProperties: false })

export const PreloadedAvatarView = Type.Object({ id: Type.String(), title: Type.String(), url: Type.String() })
