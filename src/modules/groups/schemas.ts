import { Type, type Static } from 'typebox'
import { Id, Nullable, PageQuery, Peer, Timestamp } from '../../http/schemas.js'

export const Title = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '\\S',
  errorMessage: 'title must be 1 to 128 characters, not only spaces',
})
export const Description = Type.String({ maxLength: 255 })
/** an uploaded file's path (POST /files/upload), or null to remove the avatar */
export const AvatarPath = Nullable(Type.String({ minLength: 1, maxLength: 255 }))

export const CreateGroupBody = Type.Object(
  {
    title: Title,
    description: Type.Optional(Description),
    avatar: Type.Optional(AvatarPath),
    is_public: Type.Optional(Type.Boolean()),
    /** users to add right away (besides the creator) */
    member_ids: Type.Optional(Type.Array(Id, { maxItems: 200, uniqueItems: true })),
  },
  { additionalProperties: false },
)
export type CreateGroupBody = Static<typeof CreateGroupBody>

export const ChatIdQuery = Type.Object({ chat_id: Id }, { additionalProperties: false })
export const MembersQuery = Type.Object(
  {
    chat_id: Id,
    ...PageQuery.properties,
  },
  { additionalProperties: false },
)
export const MemberBody = Type.Object({ chat_id: Id, user_id: Id }, { additionalProperties: false })
export const ChatIdBody = Type.Object({ chat_id: Id }, { additionalProperties: false })
export const TitleBody = Type.Object({ chat_id: Id, title: Title }, { additionalProperties: false })
export const DescriptionBody = Type.Object({ chat_id: Id, description: Description }, { additionalProperties: false })
export const AvatarBody = Type.Object({ chat_id: Id, avatar: AvatarPath }, { additionalProperties: false })
export const ForumBody = Type.Object({ chat_id: Id, is_forum: Type.Boolean() }, { additionalProperties: false })

export const CreateInviteBody = Type.Object(
  {
    chat_id: Id,
    expires_at: Type.Optional(Timestamp),
    usage_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  },
  { additionalProperties: false },
)
export const RevokeInviteBody = Type.Object(
  { chat_id: Id, code: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
)
/** the code, or the whole link ({base}/join/<code>) */
export const JoinBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false })

export const InviteLink = Type.Object({
  code: Type.String(),
  invite_link: Type.String(),
  uses: Type.Integer(),
  expires_at: Nullable(Timestamp),
  usage_limit: Nullable(Type.Integer()),
  is_revoked: Type.Boolean(),
  is_primary: Type.Boolean(),
  created_at: Timestamp,
})

export const CreateTopicBody = Type.Object(
  { chat_id: Id, title: Title, icon_emoji_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
  { additionalProperties: false },
)

export const GroupLastMessage = Type.Object({
  message_id: Type.Integer(),
  content: Type.String(),
  sender_id: Type.Integer(),
  sender_username: Type.String(),
  timestamp: Timestamp,
})

/** The API's Group shape, plus forum mode and the chat's event position (`chat_seq`). */
export const Group = Type.Object({
  group_id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  avatar_url: Nullable(Type.String()),
  owner_id: Nullable(Type.Integer()),
  is_public: Type.Boolean(),
  /** {base}/join/<code>: shown to everyone in a public group, to its owner and admins in a private one */
  invite_link: Nullable(Type.String()),
  member_count: Type.Integer(),
  /** null for someone reading a public group they are not in */
  my_role: Nullable(Type.String()),
  last_message: Nullable(GroupLastMessage),
  created_at: Timestamp,
  is_forum: Type.Boolean(),
  chat_seq: Type.Integer(),
})
export type Group = Static<typeof Group>

export const Member = Type.Object({
  ...Peer.properties,
  role: Type.String(),
  joined_at: Timestamp,
})

export const MemberChange = Type.Object({ chat_id: Type.Integer(), user_id: Type.Integer(), role: Nullable(Type.String()) })
