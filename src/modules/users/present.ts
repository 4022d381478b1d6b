/** users rows → the interface's Peer/User shapes. Pure. */
import type { Static } from 'typebox'
import type { UserRow } from '../../db/tables.js'
import type { AdminUser, FullPeer, Me, Peer } from '../../http/schemas.js'
import { iso, isoOrNull } from '../../lib/time.js'

export type PeerView = Static<typeof Peer>
export type FullPeerView = Static<typeof FullPeer>
export type MeView = Static<typeof Me>
export type AdminUserView = Static<typeof AdminUser>

/** Uploaded files are served under /uploads/{path}. */
export const uploadUrl = (path: string | null): string | null => (path ? `/uploads/${path}` : null)

/** Whether the user's premium runs at `now`. */
export const isPremium = (user: Pick<UserRow, 'premium_expires_at'>, now: number) => user.premium_expires_at !== null && user.premium_expires_at > now

/**
 * The Peer shape. `hidePresence` when a block stands between the viewer and this user, either
 * way: then neither sees whether the other is online or when they were last seen.
 */
export function presentPeer(user: UserRow, now: number, hidePresence = false): PeerView {
  return {
    user_id: user.id,
    username: user.username,
    display_name: user.display_name,
    avatar_url: uploadUrl(user.avatar),
    is_online: !hidePresence && user.is_online === 1,
    last_seen: hidePresence ? null : isoOrNull(user.last_seen),
    status_emoji: user.status_emoji,
    is_premium: isPremium(user, now),
    is_bot: user.is_bot === 1,
    bot_webapp_url: user.bot_webapp_url,
  }
}

/** Counters of features that arrive in later modules (stories, contacts, groups). */
export interface PeerCounters {
  has_story: boolean
  followers_count: number
  following_count: number
  groups_count: number
}

export function presentFullPeer(user: UserRow, now: number, counters: PeerCounters): FullPeerView {
  return { ...presentPeer(user, now), bio: user.bio, created_at: iso(user.created_at), ...counters }
}

export function presentMe(user: UserRow, now: number, counters: PeerCounters): MeView {
  return {
    ...presentFullPeer(user, now, counters),
    email: user.email,
    email_verified: user.email_verified === 1,
    phone: user.phone,
    is_admin: user.is_admin === 1,
  }
}

export function presentAdminUser(user: UserRow, now: number): AdminUserView {
  return {
    ...presentPeer(user, now),
    email: user.email,
    is_active: user.is_active === 1,
    is_admin: user.is_admin === 1,
    created_at: iso(user.created_at),
    last_activity: isoOrNull(user.last_activity),
  }
}
