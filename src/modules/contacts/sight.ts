/**
 * Privacy: what one viewer may see of other users. Each user chooses who sees their last seen and
 * online state, their phone number and their avatar: everyone, their contacts (the people *they*
 * added), or nobody. A block between the two, either way, hides presence too. Everyone sees all of
 * their own profile.
 *
 * `seer` answers for a whole page of users with at most one query (none when nobody on the page
 * limits anything to contacts), so every list that shows Peers can honour the settings.
 */
import type { Db } from '../../db/database.js'
import type { Audience } from '../../db/tables.js'
import { FULL_SIGHT, type Sight, type SightSubject } from '../users/present.js'
import * as repo from './repo.js'

export type Seer = (user: SightSubject) => Sight

const allows = (audience: Audience, isContact: boolean) => audience === 'everyone' || (audience === 'contacts' && isContact)

/** What a viewer sees of `user`: `isContact` when the user has the viewer among their contacts. */
export function sightOf(user: SightSubject, isContact: boolean, blocked: boolean): Sight {
  return {
    presence: !blocked && allows(user.privacy_last_seen, isContact),
    avatar: allows(user.privacy_avatar, isContact),
    phone: allows(user.privacy_phone, isContact),
  }
}

const limitsToContacts = (user: SightSubject) =>
  user.privacy_last_seen === 'contacts' || user.privacy_avatar === 'contacts' || user.privacy_phone === 'contacts'

/**
 * What `viewerId` sees of each of `users`; `blocked` holds those on either side of a block with
 * the viewer (their presence is hidden whatever their settings).
 */
export async function seer(db: Db, viewerId: number, users: Iterable<SightSubject>, blocked: ReadonlySet<number> = EMPTY): Promise<Seer> {
  const asking = new Set<number>()
  for (const user of users) if (user.id !== viewerId && limitsToContacts(user)) asking.add(user.id)
  const keepsViewer = asking.size ? await repo.ownersKeeping(db, [...asking], viewerId) : EMPTY
  return (user) => (user.id === viewerId ? FULL_SIGHT : sightOf(user, keepsViewer.has(user.id), blocked.has(user.id)))
}

/** What `viewerId` sees of one user. */
export async function sightFor(db: Db, viewerId: number, user: SightSubject, blocked = false): Promise<Sight> {
  return (await seer(db, viewerId, [user], blocked ? new Set([user.id]) : EMPTY))(user)
}

const EMPTY: ReadonlySet<number> = new Set()
