/**
 * Deleting an account (soft): after the owner proves it is them (proof.ts), users.deleted_at is
 * set and every personal field erased (users.eraseAccount), every session ends (push
 * subscriptions with them; sockets closed after commit), and the auth module's own rows that
 * name the account go (recovery codes, tickets, mailed codes, confirmation links, identity-provider
 * links); the account's live stories are removed first. Messages stay in others' chats, from
 * "Deleted account". The username is held back for
 * ACCOUNT_USERNAME_GRACE_DAYS (docs/decisions/deleted-account-usernames.md).
 */
import type { AppContext } from '../../context.js'
import { conflict, notFound } from '../../http/errors.js'
import { CLOSE } from '../../realtime/close-codes.js'
import * as bots from '../bots/index.js'
import * as communities from '../communities/index.js'
import * as sessions from '../sessions/index.js'
import * as stories from '../stories/index.js'
import * as users from '../users/index.js'
import { proveOwner } from './proof.js'
import * as repo from './repo.js'
import { isPlatformAdmin } from '../../policies/accounts.js'

export async function deleteAccount(
  ctx: AppContext,
  userId: number,
  proof: { password?: string; code?: string },
): Promise<{ deleted: true }> {
  const user = await users.getUser(ctx, userId)
  if (user.is_system === 1) throw conflict('The platform account cannot be deleted')
  if (isPlatformAdmin(user) && (await users.countActiveAdmins(ctx.db)) <= 1) {
    throw conflict('The last administrator cannot delete the account: make someone else an administrator first')
  }
  await proveOwner(ctx, user, proof, 'delete_account')
  // the live stories go first, through their module (their media released, their audience told)
  for (const story of await stories.feed(ctx, user)) {
    if (story.user_id === user.id) await stories.remove(ctx, user, story.story_id)
  }
  // the groups and channels they own pass to an heir (or end with them, when they were alone)
  await communities.leaveOwnedChats(ctx, user)
  const now = ctx.clock.now()
  const graceMs = ctx.config.accountUsernameGraceDays * 86_400_000
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await users.eraseAccount(trx, user, now, graceMs > 0 ? now + graceMs : null))) throw notFound('User not found')
    await sessions.revokeAllSessions(trx, user.id)
    await repo.deleteAccountRows(trx, user.id)
    // a bot with nobody to answer for it stops
    await bots.retireBotsOf(trx, user.id)
  })
  sessions.closeSockets(ctx, user.id, undefined, CLOSE.sessionRevoked)
  return { deleted: true }
}

/**
 * The account-cleanup job: gives back deleted accounts' usernames whose grace period is over,
 * and takes lapsed unconfirmed email addresses off their accounts (a batch at a time).
 */
export async function accountCleanup(ctx: AppContext, signal?: AbortSignal): Promise<{ usernames: number; emails: number }> {
  const now = ctx.clock.now()
  const usernames = await users.releaseUsernames(ctx.db, now)
  const lapsedBefore = now - ctx.config.unconfirmedEmailTtlDays * 86_400_000
  let emails = 0
  for (;;) {
    if (signal?.aborted) break
    const n = await users.dropLapsedEmails(ctx.db, lapsedBefore, 500)
    emails += n
    if (n < 500) break
  }
  return { usernames, emails }
}
