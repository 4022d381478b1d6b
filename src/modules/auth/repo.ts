/** The auth module's tables: recovery codes, tickets of logins waiting for a second step, mailed sign-in and account codes, email confirmation links, QR login codes. */
import type { Db } from '../../db/database.js'
import type {
  AccountCodePurpose,
  AccountCodeRow,
  EmailVerificationRow,
  IdentityProviderAccountRow,
  LoginCodeRow,
  LoginTicketRow,
  QrLoginTokenRow,
} from '../../db/tables.js'

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
  await db
    .deleteFrom('login_tickets')
    .where('expires_at', '<', ticket.created_at - 3_600_000)
    .execute()
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

/**
 * Stores a new sign-in code for an address, replacing the previous one, unless the previous one
 * is younger than `resendCutoff` (then nothing changes and the answer is undefined): one atomic
 * statement, so two requests at once cannot both mail a code.
 */
export async function putLoginCode(db: Db, code: Omit<LoginCodeRow, 'id' | 'attempts' | 'used_at'>, resendCutoff: number) {
  await db
    .deleteFrom('login_codes')
    .where('expires_at', '<', code.created_at - 3_600_000)
    .execute()
  return db
    .insertInto('login_codes')
    .values(code)
    .onConflict((oc) =>
      oc
        .column('email_key')
        .doUpdateSet({
          user_id: code.user_id,
          code_hash: code.code_hash,
          attempts: 0,
          expires_at: code.expires_at,
          used_at: null,
          created_at: code.created_at,
        })
        .where('login_codes.created_at', '<=', resendCutoff),
    )
    .returning('id')
    .executeTakeFirst()
}

export function findLoginCode(db: Db, emailKey: string): Promise<LoginCodeRow | undefined> {
  return db.selectFrom('login_codes').selectAll().where('email_key', '=', emailKey).executeTakeFirst()
}

/**
 * The two tables of mailed codes (sign-in codes, account-step codes) share their columns: the
 * three steps of using one are written once for both. (Typed as login_codes: the same columns.)
 */
export type CodeTable = 'login_codes' | 'account_codes'

/** Drops a code that could not be mailed (only that one: a newer code stays). */
export async function deleteCode(db: Db, table: CodeTable, id: number, codeHash: string) {
  await db
    .deleteFrom(table as 'login_codes')
    .where('id', '=', id)
    .where('code_hash', '=', codeHash)
    .execute()
}

/** Counts one more try at a code before it is compared; the attempts so far, or undefined when it is used, expired or out of tries. */
export async function reserveCodeAttempt(
  db: Db,
  table: CodeTable,
  id: number,
  now: number,
  maxAttempts: number,
): Promise<number | undefined> {
  const row = await db
    .updateTable(table as 'login_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .where('attempts', '<', maxAttempts)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('attempts')
    .executeTakeFirst()
  return row?.attempts
}

/** Uses a code up; false when it was used already (or replaced meanwhile). */
export async function claimCode(db: Db, table: CodeTable, id: number, codeHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable(table as 'login_codes')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** A new confirmation link for a user; the user's earlier unused links stop working. */
export async function putEmailVerification(db: Db, row: Omit<EmailVerificationRow, 'id' | 'used_at' | 'claim'> & { claim?: number }) {
  await db.deleteFrom('email_verifications').where('user_id', '=', row.user_id).where('used_at', 'is', null).execute()
  return db.insertInto('email_verifications').values(row).returning('id').executeTakeFirstOrThrow()
}

export function findEmailVerification(db: Db, tokenHash: string): Promise<EmailVerificationRow | undefined> {
  return db.selectFrom('email_verifications').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
}

/** When the user's newest confirmation link was made (the resend wait), or undefined. */
export async function lastEmailVerificationAt(db: Db, userId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('email_verifications')
    .select('created_at')
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row?.created_at
}

export async function deleteEmailVerification(db: Db, id: number) {
  await db.deleteFrom('email_verifications').where('id', '=', id).execute()
}

/** Uses a link up; false when it already was. */
export async function claimEmailVerification(db: Db, id: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('email_verifications')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** A new QR login code; codes that expired an hour ago go with it (qr_login_tokens_expires). */
export async function insertQrToken(
  db: Db,
  row: Omit<
    QrLoginTokenRow,
    'id' | 'status' | 'user_id' | 'authorized_session_id' | 'two_factor_verified' | 'scanned_at' | 'authorized_at' | 'used_at'
  >,
) {
  await db
    .deleteFrom('qr_login_tokens')
    .where('expires_at', '<', row.created_at - 3_600_000)
    .execute()
  await db.insertInto('qr_login_tokens').values(row).execute()
}

export function findQrToken(db: Db, tokenHash: string): Promise<QrLoginTokenRow | undefined> {
  return db.selectFrom('qr_login_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
}

/**
 * → scanned by this user: from pending, or from scanned by another account (the device's owner
 * scanning a code a stranger scanned first takes it over); false when neither holds or it expired.
 */
export async function markQrScanned(db: Db, id: number, userId: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('qr_login_tokens')
    .set({ status: 'scanned', user_id: userId, scanned_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('status', '=', 'pending'), eb.and([eb('status', '=', 'scanned'), eb('user_id', '!=', userId)])]))
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** scanned or authorized → pending again, nobody's: the generating device declined who scanned it. */
export async function resetQrToken(db: Db, id: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('qr_login_tokens')
    .set({ status: 'pending', user_id: null, scanned_at: null, authorized_session_id: null, authorized_at: null, two_factor_verified: 0 })
    .where('id', '=', id)
    .where('status', 'in', ['scanned', 'authorized'])
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** scanned (by this user) → authorized by one of their sessions; false otherwise. */
export async function markQrAuthorized(
  db: Db,
  id: number,
  userId: number,
  sessionId: number,
  twoFactorVerified: boolean,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('qr_login_tokens')
    .set({ status: 'authorized', authorized_session_id: sessionId, two_factor_verified: twoFactorVerified ? 1 : 0, authorized_at: now })
    .where('id', '=', id)
    .where('status', '=', 'scanned')
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** authorized → used, once: the row when this call used it, else undefined. */
export function claimQrToken(db: Db, id: number, now: number): Promise<QrLoginTokenRow | undefined> {
  return db
    .updateTable('qr_login_tokens')
    .set({ status: 'used', used_at: now })
    .where('id', '=', id)
    .where('status', '=', 'authorized')
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst()
}

export function findIdentity(db: Db, provider: string, subject: string): Promise<IdentityProviderAccountRow | undefined> {
  return db
    .selectFrom('identity_provider_accounts')
    .selectAll()
    .where('provider', '=', provider)
    .where('subject', '=', subject)
    .executeTakeFirst()
}

/** Ties an identity to a user; a unique violation when another request tied it first. */
export async function insertIdentity(db: Db, row: Omit<IdentityProviderAccountRow, 'id' | 'last_login_at'>) {
  await db
    .insertInto('identity_provider_accounts')
    .values({ ...row, last_login_at: row.created_at })
    .execute()
}

export async function touchIdentity(db: Db, id: number, now: number) {
  await db.updateTable('identity_provider_accounts').set({ last_login_at: now }).where('id', '=', id).execute()
}

/**
 * Stores a new account code for a purpose and subject, replacing the previous one unless it is
 * younger than `resendCutoff` (then nothing changes and the answer is undefined).
 */
export function putAccountCode(db: Db, code: Omit<AccountCodeRow, 'id' | 'attempts' | 'used_at'>, resendCutoff: number) {
  return db
    .insertInto('account_codes')
    .values(code)
    .onConflict((oc) =>
      oc
        .columns(['purpose', 'subject'])
        .doUpdateSet({
          user_id: code.user_id,
          code_hash: code.code_hash,
          attempts: 0,
          expires_at: code.expires_at,
          used_at: null,
          created_at: code.created_at,
        })
        .where('account_codes.created_at', '<=', resendCutoff),
    )
    .returning('id')
    .executeTakeFirst()
}

/** Codes that ended a while ago go (account_codes_expires). */
export async function deleteOldAccountCodes(db: Db, before: number) {
  await db.deleteFrom('account_codes').where('expires_at', '<', before).execute()
}

export function findAccountCode(db: Db, purpose: AccountCodePurpose, subject: string): Promise<AccountCodeRow | undefined> {
  return db.selectFrom('account_codes').selectAll().where('purpose', '=', purpose).where('subject', '=', subject).executeTakeFirst()
}

/** Everything of the auth module's that names a deleted account: codes, links, tickets, identity-provider links. */
export async function deleteAccountRows(db: Db, userId: number) {
  await deleteTwoFactorRows(db, userId)
  await db.deleteFrom('identity_provider_accounts').where('user_id', '=', userId).execute()
  await db.deleteFrom('email_verifications').where('user_id', '=', userId).execute()
  await db.deleteFrom('login_codes').where('user_id', '=', userId).execute()
  await db.deleteFrom('account_codes').where('user_id', '=', userId).execute()
}
