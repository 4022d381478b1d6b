/** users rows → the API's Peer/User shapes. Pure. */
import type { Static } from 'typebox'
import type { UserRow } from '../../db/tables.js'
import type { AdminUser, FullPeer, Me, Peer } from '../../http/schemas.js'
import { iso, isoOrNull } from '../../lib/time.js'
import { FULL_SIGHT, publicSight, type Sight } from '../../policies/sight.js'
import { avatarUrl } from './avatars.js'

export type PeerView = Static<typeof Peer>
export type FullPeerView = Static<typeof FullPeer>
export type MeView = Static<typeof Me>
export type AdminUserView = Static<typeof AdminUser>

/** Uploaded files are served under /uploads/{path}. */
export const uploadUrl = (path: string | null): string | null => (path ? `/uploads/${path}` : null)

/** Whether the user's premium runs at `now`. */
export const isPremium = (user: Pick<UserRow, 'premium_expires_at'>, now: number) =>
  user.premium_expires_at !== null && user.premium_expires_at > now

/**
 * The Peer shape as one viewer sees it. Without a sight, only what the user shows everyone: a
 * caller that knows the viewer passes what policies/sight.ts worked out for them.
 */
export function presentPeer(user: UserRow, now: number, sight: Sight = publicSight(user)): PeerView {
  if (user.deleted_at !== null) return presentDeleted(user)
  return {
    user_id: user.id,
    username: user.username,
    display_name: user.display_name,
    avatar_url: sight.avatar ? avatarUrl(user.avatar) : null,
    is_online: sight.presence && user.is_online === 1,
    last_seen: sight.presence ? isoOrNull(user.last_seen) : null,
    status_emoji: user.status_emoji,
    is_premium: isPremium(user, now),
    is_bot: user.is_bot === 1,
    bot_webapp_url: user.bot_webapp_url,
  }
}

/** What a deleted account shows wherever it appears. */
export const DELETED_DISPLAY_NAME = 'Deleted account'
/** A deleted account's username: never a valid username (a hyphen), so nobody can register it. */
export const deletedUsername = (userId: number) => `deleted-${userId}`

/** A deleted account, wherever it appears: its id, a placeholder name, nothing else. */
function presentDeleted(user: Pick<UserRow, 'id'>): PeerView {
  return {
    user_id: user.id,
    username: deletedUsername(user.id),
    display_name: DELETED_DISPLAY_NAME,
    avatar_url: null,
    is_online: false,
    last_seen: null,
    status_emoji: '',
    is_premium: false,
    is_bot: false,
    bot_webapp_url: null,
  }
}

/** Counters of features that arrive in later modules (stories, contacts, groups). */
export interface PeerCounters {
  has_story: boolean
  followers_count: number
  following_count: number
  groups_count: number
}

export function presentFullPeer(user: UserRow, now: number, counters: PeerCounters, sight: Sight = publicSight(user)): FullPeerView {
  return { ...presentPeer(user, now, sight), bio: user.deleted_at === null ? user.bio : '', created_at: iso(user.created_at), ...counters }
}

export function presentMe(user: UserRow, now: number, counters: PeerCounters): MeView {
  return {
    ...presentFullPeer(user, now, counters, FULL_SIGHT),
    email: user.email,
    email_verified: user.email_verified === 1,
    phone: user.phone,
    is_admin: user.is_admin === 1,
  }
}

export function presentAdminUser(user: UserRow, now: number): AdminUserView {
  return {
    ...presentPeer(user, now, FULL_SIGHT),
    email: user.email,
    is_active: user.is_active === 1,
    is_admin: user.is_admin === 1,
    created_at: iso(user.created_at),
    last_activity: isoOrNull(user.last_activity),
  }
}
