/** Channel rows → the API's Channel shape. Pure. */
import { iso } from '../../lib/time.js'
import { visibleInvite } from '../groups/index.js'
import type { ChatView } from '../communities/index.js'
import { uploadUrl } from '../users/index.js'
import type { Channel } from './schemas.js'

/** An owner or admin, as communities' staff() reads them. */
export interface Staff {
  id: number
  username: string
  role: string
}

/** The Channel shape; with `staff`, the full one (`is_subscribed`, `admins`), without it the create response. */
export function presentChannel(chat: ChatView, link: (code: string) => string, staff?: Staff[]): Channel {
  return {
    channel_id: chat.id,
    name: chat.title ?? '',
    description: chat.description ?? '',
    avatar_url: uploadUrl(chat.avatar),
    owner_id: chat.owner_id,
    owner_username: chat.owner_username,
    is_public: chat.is_public === 1,
    invite_link: visibleInvite(chat, link),
    subscriber_count: chat.member_count,
    ...(staff
      ? { is_subscribed: chat.my_role !== null, admins: staff.map((s) => ({ user_id: s.id, username: s.username, role: s.role })) }
      : {}),
    created_at: iso(chat.created_at),
    is_verified: chat.is_verified === 1,
    discussion_group_id: chat.discussion_group_id,
    my_role: chat.my_role,
    chat_seq: chat.event_seq,
  }
}
