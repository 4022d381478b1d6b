import { Type } from 'typebox'
import { Id, Nullable, Timestamp } from '../../http/schemas.js'
import { PHONE_INPUT_MAX } from '../../lib/phone.js'

/** phone numbers per import */
export const IMPORT_MAX = 1000

/** The API's Contact list item (plus is_blocked: I blocked them). */
export const ContactView = Type.Object({
  user_id: Type.Integer(),
  username: Type.String(),
  display_name: Type.String(),
  avatar_url: Nullable(Type.String()),
  custom_name: Nullable(Type.String()),
  is_online: Type.Boolean(),
  last_seen: Nullable(Timestamp),
  added_at: Timestamp,
  is_premium: Type.Boolean(),
  status_emoji: Type.String(),
  is_blocked: Type.Boolean(),
})

export const ContactList = Type.Object({
  contacts: Type.Array(ContactView),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
  pages: Type.Integer(),
})

export const AddContact = Type.Object(
  {
    user_id: Id,
    /** my own name for them (custom_name) */
    display_name: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
  },
  { additionalProperties: false },
)

export const RemoveContact = Type.Object({ user_id: Type.Optional(Id) }, { additionalProperties: false })

export const ImportContacts = Type.Object(
  {
    /** phone numbers, with a country code or in PHONE_DEFAULT_REGION's format */
    phones: Type.Array(Type.String({ maxLength: PHONE_INPUT_MAX }), { minItems: 1, maxItems: IMPORT_MAX }),
  },
  { additionalProperties: false },
)

export const ImportResult = Type.Object({
  imported: Type.Array(ContactView),
  /** the numbers as sent that matched nobody who may be found by them */
  not_found: Type.Array(Type.String()),
})
