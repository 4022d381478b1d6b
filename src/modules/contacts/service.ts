/**
 * Contacts: the people a user keeps, under a name of their own. Whom a user has as a contact
 * decides whose stories they follow, who sees their contacts-only stories, and who sees what their
 * privacy settings keep for contacts (sight.ts). Every change reaches the owner's other devices
 * (`contact.added`, `contact.removed`).
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import type { UserRow } from '../../db/tables.js'
import { inTransaction } from '../../events/outbox.js'
import { conflict, notFound, validationError } from '../../http/errors.js'
import { toE164 } from '../../lib/phone.js'
import * as blocks from '../../policies/blocks.js'
import * as users from '../users/index.js'
import { presentContact } from './present.js'
import * as repo from './repo.js'
import type { ContactWithUser } from './repo.js'
import { isUsable } from '../../policies/accounts.js'
import { ownersKeeping, seer, sightOf } from '../../policies/sight.js'

export const isContactOf = (db: Db, ownerId: number, userId: number) => repo.has(db, ownerId, userId)

/** Adds a contact, under my own name for them if given; already a contact: 409 (the unique index decides a race). */
export async function add(ctx: AppContext, me: UserRow, userId: number, displayName: string | null | undefined) {
  if (userId === me.id) throw validationError('You cannot add yourself as a contact')
  const other = await users.findById(ctx, userId)
  if (!other || other.deleted_at !== null) throw notFound('User not found')
  if (await repo.has(ctx.db, me.id, userId)) throw conflict('Already in your contacts')
  return inTransaction(ctx, async (trx, events) => {
    const [contact] = await presentContacts(
      ctx,
      me,
      [(await repo.insert(trx, me.id, userId, displayName?.trim() || null, events.now))!],
      trx,
    )
    await events.toUsers([me.id], 'contact.added', { contact })
    return contact
  })
}

export async function remove(ctx: AppContext, me: UserRow, userId: number) {
  const row = await repo.find(ctx.db, me.id, userId)
  if (!row) throw notFound('Not in your contacts')
  return inTransaction(ctx, async (trx, events) => {
    if (!(await repo.remove(trx, me.id, userId))) throw notFound('Not in your contacts')
    await events.toUsers([me.id], 'contact.removed', { user_id: userId })
    return (await presentContacts(ctx, me, [row], trx))[0]
  })
}

export async function list(ctx: AppContext, me: UserRow, page: number, perPage: number) {
  const { rows, total } = await repo.list(ctx.db, me.id, page, perPage)
  return { contacts: await presentContacts(ctx, me, rows), total, page, per_page: perPage, pages: Math.ceil(total / perPage) }
}

/**
 * Adds the users with these phone numbers as contacts (those already contacts stay as they are,
 * and are answered too). A number is read in PHONE_DEFAULT_REGION unless it has a country code.
 * A user is found only when their privacy lets me find them by their number (everyone, or their
 * contacts and I am one), neither of us blocked the other, and the account is active; anyone
 * else's number is answered exactly like a number nobody has, so an import reveals nothing about
 * them.
 */
export async function importPhones(ctx: AppContext, me: UserRow, phones: readonly string[]) {
  const wanted = new Map<string, string[]>()
  const notFound: string[] = []
  for (const phone of phones) {
    const number = toE164(phone.trim(), ctx.config.phoneDefaultRegion)
    if (number === null) notFound.push(phone)
    else wanted.set(number, [...(wanted.get(number) ?? []), phone])
  }
  const [owners, blocked] = await Promise.all([users.findByPhones(ctx.db, [...wanted.keys()]), blocks.blockedAround(ctx.db, me.id)])
  const keepMe = await ownersKeeping(
    ctx.db,
    owners.filter((user) => user.privacy_phone === 'contacts').map((user) => user.id),
    me.id,
  )
  const found = owners.filter(
    (user) => user.id !== me.id && isUsable(user) && !blocked.has(user.id) && sightOf(user, keepMe.has(user.id), false).phone,
  )
  const foundPhones = new Set(found.map((user) => user.phone))
  for (const [number, inputs] of wanted) if (!foundPhones.has(number)) notFound.push(...inputs)
  if (found.length === 0) return { imported: [], not_found: notFound }
  const imported = await inTransaction(ctx, async (trx, events) => {
    const added = await repo.insertMissing(
      trx,
      me.id,
      found.map((user) => user.id),
      events.now,
    )
    const contacts = await presentContacts(
      ctx,
      me,
      await repo.findMany(
        trx,
        me.id,
        found.map((user) => user.id),
      ),
      trx,
    )
    for (const contact of contacts) if (added.has(contact.user_id)) await events.toUsers([me.id], 'contact.added', { contact })
    return contacts
  })
  return { imported, not_found: notFound }
}

/** Contacts as their owner sees them: each contact's privacy, and no presence across a block. */
async function presentContacts(ctx: AppContext, me: UserRow, rows: ContactWithUser[], db: Db = ctx.db) {
  const blocked = new Set(rows.filter((row) => Boolean(row.blocked_by_me) || Boolean(row.blocked_by_them)).map((row) => row.id))
  const see = await seer(db, me.id, rows, blocked)
  const now = ctx.clock.now()
  return rows.map((row) => presentContact(row, now, see(row)))
}
