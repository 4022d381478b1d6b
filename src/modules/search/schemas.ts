import { Type } from 'typebox'
import { Id, Peer, Timestamp, pageQuery } from '../../http/schemas.js'
import { MessageView } from '../messages/index.js'

export const GlobalQuery = Type.Object(
  {
    q: Type.String({ maxLength: 64 }),
    ...pageQuery(50).properties,
  },
  { additionalProperties: false },
)

export const MessagesQuery = Type.Object(
  {
    q: Type.String({ maxLength: 256 }),
    chat_id: Type.Optional(Id),
    before_id: Type.Optional(Id),
    limit: Type.Integer({ minimum: 1, maximum: 50, default: 20 }),
  },
  { additionalProperties: false },
)

export const FoundMessages = Type.Object({ items: Type.Array(MessageView), next_before_id: Type.Union([Type.Integer(), Type.Null()]) })

export const Found = Type.Object({ ...Peer.properties, bio: Type.String(), is_contact: Type.Boolean() })

export const RecentSearch = Type.Object({ search_query: Type.String(), search_type: Type.String(), created_at: Timestamp })
