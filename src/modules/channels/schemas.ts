import { Type, type Static } from 'typebox'
import { Id, Nullable, PageQuery, Peer, Timestamp } from '../../http/schemas.js'
import { AvatarPath, Description, Title } from '../groups/index.js'

export const CreateChannelBody = Type.Object(
  {
    title: Title,
    description: Type.Optional(Description),
    avatar: Type.Optional(AvatarPath),
    /** public channels (the default) can be found and subscribed to by anyone; private ones only through their invite link */
    is_public: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export type CreateChannelBody = Static<typeof CreateChannelBody>

export const ChannelIdQuery = Type.Object({ channel_id: Id }, { additionalProperties: false })
export const ChannelIdParams = Type.Object({ id: Id }, { additionalProperties: false })
export const ChannelIdBody = Type.Object({ channel_id: Id }, { additionalProperties: false })
export const SubscribersQuery = Type.Object(
  {
    channel_id: Id,
    ...PageQuery.properties,
  },
  { additionalProperties: false },
)
/** a public channel by id, or any channel through its invite code or link */
export const SubscribeBody = Type.Object(
  { channel_id: Type.Optional(Id), code: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })) },
  { additionalProperties: false },
)
export const ChannelUserBody = Type.Object({ channel_id: Id, user_id: Id }, { additionalProperties: false })
export const ChannelTitleBody = Type.Object({ channel_id: Id, title: Title }, { additionalProperties: false })
export const ChannelDescriptionBody = Type.Object({ channel_id: Id, description: Description }, { additionalProperties: false })
export const ChannelAvatarBody = Type.Object({ channel_id: Id, avatar: AvatarPath }, { additionalProperties: false })
export const ChannelInviteBody = Type.Object(
  { channel_id: Id, expires_at: Type.Optional(Timestamp), usage_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })) },
  { additionalProperties: false },
)
export const ChannelRevokeBody = Type.Object(
  { channel_id: Id, code: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
)
export const BindBody = Type.Object({ channel_id: Id, group_id: Id }, { additionalProperties: false })

/** The API's Channel shape (GET V2/channels/{id}), plus verification, discussion group and event position. */
export const Channel = Type.Object({
  channel_id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  avatar_url: Nullable(Type.String()),
  owner_id: Nullable(Type.Integer()),
  owner_username: Nullable(Type.String()),
  is_public: Type.Boolean(),
  /** {base}/channel/<code>: shown to everyone for a public channel, to its owner and admins for a private one */
  invite_link: Nullable(Type.String()),
  subscriber_count: Type.Integer(),
  is_subscribed: Type.Optional(Type.Boolean()),
  admins: Type.Optional(Type.Array(Type.Object({ user_id: Type.Integer(), username: Type.String(), role: Type.String() }))),
  created_at: Timestamp,
  is_verified: Type.Boolean(),
  discussion_group_id: Nullable(Type.Integer()),
  my_role: Nullable(Type.String()),
  chat_seq: Type.Integer(),
})
export type Channel = Static<typeof Channel>

export const Subscriber = Type.Object({ ...Peer.properties, role: Type.String(), joined_at: Timestamp })
