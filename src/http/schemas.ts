/** Shared request/response shapes. */
import { Type, type Static, type TSchema } from 'typebox'

export const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
export const Timestamp = Type.String({ format: 'date-time' })
/**
 * `schema` or null, as OpenAPI 3.0's `nullable: true` (the document is 3.0.3, which has no null
 * type). Ajv and fast-json-stringify read it natively; the `anyOf [schema, null]` it replaces made
 * the serializer run a compiled validator per field to pick a branch, doubling the cost of a
 * message's JSON.
 */
export const Nullable = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T> | null>({ ...schema, nullable: true })

export const IdParams = Type.Object({ id: Id }, { additionalProperties: false })

/** A page number of a paged list, from 1. */
export const PageNumber = Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })

/** The page a paged list is asked for: `page` from 1, `per_page` rows of at most `maxPerPage`. */
export const pageQuery = (maxPerPage = 100) =>
  Type.Object(
    { page: PageNumber, per_page: Type.Integer({ minimum: 1, maximum: maxPerPage, default: 20 }) },
    { additionalProperties: false },
  )

export const PageQuery = pageQuery()

export const Username = Type.String({
  pattern: '^[A-Za-z0-9_]{3,32}$',
  errorMessage: 'Username must be 3 to 32 characters: letters, digits and underscores',
})

/** The API's Peer/User shape (chat list and embedded peers). */
export const Peer = Type.Object({
  user_id: Type.Integer(),
  username: Type.String(),
  display_name: Type.String(),
  avatar_url: Nullable(Type.String()),
  is_online: Type.Boolean(),
  last_seen: Nullable(Timestamp),
  status_emoji: Type.String(),
  is_premium: Type.Boolean(),
  is_bot: Type.Boolean(),
  bot_webapp_url: Nullable(Type.String()),
})

/** The fuller helper variant: Peer + bio, created_at and counters. */
export const FullPeer = Type.Object({
  ...Peer.properties,
  bio: Type.String(),
  created_at: Timestamp,
  has_story: Type.Boolean(),
  followers_count: Type.Integer(),
  following_count: Type.Integer(),
  groups_count: Type.Integer(),
})

/** The signed-in user's own profile: fuller Peer + private fields. */
export const Me = Type.Object({
  ...FullPeer.properties,
  email: Nullable(Type.String()),
  email_verified: Type.Boolean(),
  phone: Nullable(Type.String()),
  is_admin: Type.Boolean(),
})

/** A user as the admin area sees it. */
export const AdminUser = Type.Object({
  ...Peer.properties,
  email: Nullable(Type.String()),
  is_active: Type.Boolean(),
  is_admin: Type.Boolean(),
  created_at: Timestamp,
  last_activity: Nullable(Timestamp),
})
