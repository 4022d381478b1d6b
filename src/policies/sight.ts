/**
 * Privacy: what one viewer may see of another user. Each user chooses who sees their last seen
 * and online state, their phone number and their avatar: everyone, their contacts (the people
 * *they* added), or nobody. A block between the two, either way, hides presence too. Everyone
 * sees all of their own profile.
 *
 * `seer` answers for a whole page of users with at most one query (none when nobody on the page
 * limits anything to contacts), so every list that shows people can honour the settings.
 */
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely'
import type { Db } from '../db/database.js'
import type { Audience, UserRow } from '../db/tables.js'
import { operand, type Operand } from './sql.js'

/** The part of a user row that decides what others see of it. */
export type SightSubject = Pick<UserRow, 'id' | 'privacy_last_seen' | 'privacy_avatar' | 'privacy_phone'>

/** What one viewer may see of a user. */
export interface Sight {
  /** online state and last seen */
  presence: boolean
  avatar: boolean
  phone: boolean
}

export const FULL_SIGHT: Sight = { presence: true, avatar: true, phone: true }

/** Whether a part shown to `audience` reaches a viewer (`isContact`: the owner keeps the viewer as a contact). */
export const allows = (audience: Audience, isContact: boolean): boolean => audience === 'everyone' || (audience === 'contacts' && isContact)

/** What a viewer sees of `user`: `isContact` when the user has the viewer among their contacts. */
export function sightOf(user: SightSubject, isContact: boolean, blocked: boolean): Sight {
  return {
    presence: !blocked && allows(user.privacy_last_seen, isContact),
    avatar: allows(user.privacy_avatar, isContact),
    phone: allows(user.privacy_phone, isContact),
  }
}

/** What a user shows to anyone at all: the parts whose audience is everyone. */
export const publicSight = (user: SightSubject): Sight => sightOf(user, false, false)

/** Whether any part of the user is limited to their contacts (so a viewer's place among them matters). */
export const limitsToContacts = (user: Pick<UserRow, 'privacy_last_seen' | 'privacy_avatar' | 'privacy_phone'>): boolean =>
  user.privacy_last_seen === 'contacts' || user.privacy_avatar === 'contacts' || user.privacy_phone === 'contacts'

/** Whether `owner` keeps `contact` among their contacts. */
export const keepsAsContact = (owner: Operand, contact: Operand): RawBuilder<SqlBool> =>
  sql<SqlBool>`exists (select 1 from contacts kc where kc.owner_id = ${operand(owner)} and kc.contact_user_id = ${operand(contact)})`

/** `allows` for queries: the audience column `audience` of the user `owner`, seen by `viewer`. */
export const audienceAllows = (audience: Expression<unknown>, owner: Operand, viewer: Operand): RawBuilder<SqlBool> =>
  sql<SqlBool>`(${audience} = 'everyone' or (${audience} = 'contacts' and ${keepsAsContact(owner, viewer)}))`

/** user ids per query when asking whose contacts a viewer is (well under either dialect's bound-parameter limit) */
const OWNER_CHUNK = 500

/** Those of `ownerIds` who keep `contactId` among their contacts. */
export async function ownersKeeping(db: Db, ownerIds: readonly number[], contactId: number): Promise<Set<number>> {
  const owners = new Set<number>()
  for (let i = 0; i < ownerIds.length; i += OWNER_CHUNK) {
    const rows = await db
      .selectFrom('contacts')
      .select('owner_id')
      .where('contact_user_id', '=', contactId)
      .where('owner_id', 'in', ownerIds.slice(i, i + OWNER_CHUNK))
      .execute()
    for (const row of rows) owners.add(row.owner_id)
  }
  return owners
}

export type Seer = (user: SightSubject) => Sight

const EMPTY: ReadonlySet<number> = new Set()

/**
 * What `viewerId` sees of each of `users`; `blocked` holds those on either side of a block with
 * the viewer (their presence is hidden whatever their settings).
 */
export async function seer(db: Db, viewerId: number, users: Iterable<SightSubject>, blocked: ReadonlySet<number> = EMPTY): Promise<Seer> {
  const asking = new Set<number>()
  for (const user of users) if (user.id !== viewerId && limitsToContacts(user)) asking.add(user.id)
  const keepsViewer = asking.size ? await ownersKeeping(db, [...asking], viewerId) : EMPTY
  return (user) => (user.id === viewerId ? FULL_SIGHT : sightOf(user, keepsViewer.has(user.id), blocked.has(user.id)))
}

/** What `viewerId` sees of one user. */
export async function sightFor(db: Db, viewerId: number, user: SightSubject, blocked = false): Promise<Sight> {
  return (await seer(db, viewerId, [user], blocked ? new Set([user.id]) : EMPTY))(user)
}
