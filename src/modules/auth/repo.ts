/** The auth module's tables: recovery codes and the tickets of logins waiting for a second step. */
import type { Db } from '../../db/database.js'
import type { LoginTicketRow } from '../../db/tables.js'

export async function replaceRecoveryCodes(db: Db, userId: number, codeHashes: readonly string[], now: number) {
  await db.deleteFrom('two_factor_recovery_codes').where('user_id', '=', userId).execute()
  await db
    .insertInto('two_factor_recovery_codes')
    .values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash, created_at: now })))
    .execute()
}

/** Marks an unused recovery code of the user used; false when there is none with this hash. */
export async function useRecoveryCode(db: Db, userId: number, codeHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('two_factor_recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function deleteTwoFactorRows(db: Db, userId: number) {
  await db.deleteFrom('two_factor_recovery_codes').where('user_id', '=', userId).execute()
  await db.deleteFrom('login_tickets').where('user_id', '=', userId).execute()
}

export async function insertTicket(db: Db, ticket: Omit<LoginTicketRow, 'id' | 'attempts' | 'used_at'>) {
  // tickets live minutes: whatever expired a while ago goes with each new one (login_tickets_expires)
  await db.deleteFrom('login_tickets').where('expires_at', '<', ticket.created_at - 3_600_000).execute()
  await db.insertInto('login_tickets').values(ticket).execute()
}

export function findTicket(db: Db, ticketHash: string): Promise<LoginTicketRow | undefined> {
  return db.selectFrom('login_tickets').selectAll().where('ticket_hash', '=', ticketHash).executeTakeFirst()
}

/**
 * Counts one more try at a ticket before its code is looked at, so parallel guesses cannot
 * outrun the limit; false when the ticket is used, expired or out of tries.
 */
export async function reserveTicketAttempt(db: Db, id: number, now: number, maxAttempts: number): Promise<boolean> {
  const result = await db
    .updateTable('login_tickets')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .where('attempts', '<', maxAttempts)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Uses a ticket up; false when it already was. */
export async function claimTicket(db: Db, id: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('login_tickets')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}
