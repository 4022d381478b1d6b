/**
 * The platform's own account, `tern`: broadcasts and moderators' warnings reach users as messages
 * from it, in their personal chat with it. It is a bot (is_bot) marked is_system, has no password
 * (nobody signs in as it), and its username is reserved for everyone else. Created on first use.
 */
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { UserRow } from '../../db/tables.js'
import * as repo from './repo.js'

export const SYSTEM_USERNAME = 'tern'

const known = new WeakMap<AppContext, Promise<UserRow>>()

/** The system account (created the first time it is needed). */
export function systemAccount(ctx: AppContext): Promise<UserRow> {
  let account = known.get(ctx)
  if (!account) {
    account = ensure(ctx)
    known.set(ctx, account)
    account.catch(() => known.delete(ctx))
  }
  return account
}

async function find(ctx: AppContext) {
  return repo.findSystem(ctx.db)
}

async function ensure(ctx: AppContext): Promise<UserRow> {
  const existing = await find(ctx)
  if (existing) return existing
  // An account named `tern` made before the name was reserved keeps it; the system takes another.
  const taken = await repo.isTaken(ctx.db, 'username', SYSTEM_USERNAME)
  try {
    return await ctx.db.transaction().execute((trx) =>
      repo.insertUser(trx, {
        username: taken ? `${SYSTEM_USERNAME}_system` : SYSTEM_USERNAME,
        email: null,
        display_name: 'Tern',
        password_hash: null,
        bio: 'Messages from the Tern platform',
        is_bot: 1,
        is_system: 1,
        created_at: ctx.clock.now(),
      }),
    )
  } catch (error) {
    // another instance created it at the same moment
    if (!isUniqueViolation(error)) throw error
    const created = await find(ctx)
    if (!created) throw error
    return created
  }
}
