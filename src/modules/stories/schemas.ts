import { Type } from 'typebox'
import { Id, Nullable, Peer, Timestamp } from '../../http/schemas.js'

/** Longest caption, in characters (Telegram allows 2,048 to its premium users, 200 to others). */
export const CAPTION_MAX = 2048
/** Most users a `selected` story may name. */
export const ALLOWED_USERS_MAX = 1000

export const MediaType = Type.Union([Type.Literal('image'), Type.Literal('video')])
export const PrivacyType = Type.Union([Type.Literal('everyone'), Type.Literal('contacts'), Type.Literal('selected')], {
  errorMessage: 'privacy_type must be everyone, contacts or selected',
})

export const CreateStory = Type.Object(
  {
    media_path: Type.String({ minLength: 1, maxLength: 255 }),
    caption: Type.Optional(Type.String({ maxLength: CAPTION_MAX })),
    media_type: Type.Optional(MediaType),
    music_path: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
    privacy_type: Type.Optional(PrivacyType),
    allowed_user_ids: Type.Optional(Type.Array(Id, { maxItems: ALLOWED_USERS_MAX })),
  },
  { additionalProperties: false },
)

/** `reaction`: one emoji sets mine; null or "" clears it. */
export const ReactionBody = Type.Object({ reaction: Nullable(Type.String({ maxLength: 64 })) }, { additionalProperties: false })

/** The API's Story shape (V2), as the caller sees it. */
export const StoryView = Type.Object({
  story_id: Type.Integer(),
  user_id: Type.Integer(),
  media_path: Type.String(),
  media_url: Type.String(),
  media_type: MediaType,
  caption: Type.String(),
  music_path: Nullable(Type.String()),
  privacy_type: PrivacyType,
  created_at: Timestamp,
  expires_at: Timestamp,
  /** whether I viewed it (my own: always true) */
  is_viewed: Type.Boolean(),
  /** the owner's only: null for everyone else */
  view_count: Nullable(Type.Integer()),
  like_count: Type.Integer(),
  is_liked: Type.Boolean(),
  /** my reaction, never another's */
  my_reaction: Nullable(Type.String()),
})

/** A feed item: the Story with its author. */
export const FeedStory = Type.Object({ ...StoryView.properties, user: Peer })

export const StoryViewer = Type.Object({ user: Peer, viewed_at: Timestamp, reaction: Nullable(Type.String()) })

/** The V1 variant: viewers as user objects, likes as a count, liked, the raw reaction. */
export const StoryV1 = Type.Object({
  story_id: Type.Integer(),
  user_id: Type.Integer(),
  user: Peer,
  media_path: Type.String(),
  media_url: Type.String(),
  media_type: MediaType,
  caption: Type.String(),
  created_at: Timestamp,
  expires_at: Timestamp,
  is_viewed: Type.Boolean(),
  /** the owner's viewers (newest first, at most 100), with premium; empty for everyone else */
  views: Type.Array(Peer),
  likes: Type.Integer(),
  liked: Type.Boolean(),
  my_reaction: Type.String(),
})

export const StoryParams = Type.Object({ id: Id }, { additionalProperties: false })
