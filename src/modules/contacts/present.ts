/** Contact rows → the API's Contact list item. Pure. */
import type { Static } from 'typebox'
import { iso } from '../../lib/time.js'
import type { Sight } from '../../policies/sight.js'
import { presentPeer } from '../users/index.js'
import type { ContactWithUser } from './repo.js'
import type { ContactView } from './schemas.js'

/** `sight`: what the owner may see of the contact (policies/sight.ts). */
export function presentContact(row: ContactWithUser, now: number, sight: Sight): Static<typeof ContactView> {
  const blockedByMe = Boolean(row.blocked_by_me)
  const peer = presentPeer(row, now, sight)
  return {
    user_id: peer.user_id,
    username: peer.username,
    display_name: peer.display_name,
    avatar_url: peer.avatar_url,
    custom_name: row.custom_name,
    is_online: peer.is_online,
    last_seen: peer.last_seen,
    added_at: iso(row.added_at),
    is_premium: peer.is_premium,
    status_emoji: peer.status_emoji,
    is_blocked: blockedByMe,
  }
}
