/**
 * Contacts: the people a user keeps, under a name of their own. Whom a user has as a contact
 * decides whose stories they follow and who sees their contacts-only stories.
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import type { UserRow } from '../../db/tables.js'
import { conflict, notFound, validationError } from '../../http/errors.js'
import * as users from '../users/service.js'
import { presentContact } from './present.js'
import * as repo from './repo.js'

export const isContactOf = (db: Db, ownerId: number, userId: number) => repo.has(db, ownerId, userId)
export const contactIds = repo.contactIds
export const ownersOf = repo.ownersOf
export const counts = repo.counts

/** Adds a contact, under my own name for them if given; already a contact: 409 (the unique index decides a race). */
export async function add(ctx: AppContext, me: UserRow, userId: number, displayName: string | null | undefined) {
  if (userId === me.id) throw validationError('You cannot add yourself as a contact')
  const other = await users.findById(ctx, userId)
  if (!other || other.deleted_at !== null) throw notFound('User not found')
  if (await repo.has(ctx.db, me.id, userId)) throw conflict('Already in your contacts')
  const row = await repo.insert(ctx.db, me.id, userId, displayName?.trim() || null, ctx.clock.now())
  return presentContact(row!, ctx.clock.now())
}

export async function remove(ctx: AppContext, me: UserRow, userId: number) {
  const row = await repo.find(ctx.db, me.id, userId)
  if (!row || !(await repo.remove(ctx.db, me.id, userId))) throw notFound('Not in your contacts')
  return presentContact(row, ctx.clock.now())
}

export async function list(ctx: AppContext, me: UserRow, page: number, perPage: number) {
  const { rows, total } = await repo.list(ctx.db, me.id, page, perPage)
  const now = ctx.clock.now()
  return { contacts: rows.map((row) => presentContact(row, now)), total, page, per_page: perPage, pages: Math.ceil(total / perPage) }
}
