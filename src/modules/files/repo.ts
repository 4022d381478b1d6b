import type { Db } from '../../db/database.js'
import type { FileObjectRow, FileUploadsTable, UploadSessionRow } from '../../db/tables.js'
import type { Insertable } from 'kysely'
import { bump } from '../../db/counters.js'

export function findObject(db: Db, hash: string): Promise<FileObjectRow | undefined> {
  return db.selectFrom('file_objects').selectAll().where('hash', '=', hash).executeTakeFirst()
}

/**
 * Stores an object's row once; a concurrent upload of the same bytes may have stored it first.
 * The stored-bytes counter moves only for the upload that stored it.
 */
export async function insertObject(db: Db, row: FileObjectRow): Promise<FileObjectRow> {
  const stored = await db
    .insertInto('file_objects')
    .values(row)
    .onConflict((oc) => oc.column('hash').doNothing())
    .executeTakeFirst()
  if (Number(stored.numInsertedOrUpdatedRows ?? 0) > 0) await bump(db, 'files_bytes', row.size)
  return db.selectFrom('file_objects').selectAll().where('hash', '=', row.hash).executeTakeFirstOrThrow()
}

export function insertUpload(db: Db, row: Insertable<FileUploadsTable>) {
  return db.insertInto('file_uploads').values(row).returningAll().executeTakeFirstOrThrow()
}

/** An upload with its object's content fields. */
function uploads(db: Db) {
  return db
    .selectFrom('file_uploads as u')
    .innerJoin('file_objects as o', 'o.hash', 'u.hash')
    .selectAll('u')
    .select(['o.storage_key', 'o.file_type', 'o.width', 'o.height', 'o.thumbnail_key', 'o.preview_size'])
}
export type UploadWithObject = NonNullable<Awaited<ReturnType<typeof findUpload>>>

export function findUpload(db: Db, id: number) {
  return uploads(db).where('u.id', '=', id).executeTakeFirst()
}

export function findOwnUploadByPath(db: Db, ownerId: number, path: string) {
  return uploads(db).where('u.path', '=', path).where('u.owner_id', '=', ownerId).executeTakeFirst()
}

export function findOwnUploadBySource(db: Db, ownerId: number, source: string) {
  return uploads(db).where('u.source', '=', source).where('u.owner_id', '=', ownerId).executeTakeFirst()
}

/** The upload served at `/uploads/{path}`: by its path, or by its thumbnail's. */
export function findByServedPath(db: Db, path: string, thumbnail: boolean) {
  return uploads(db)
    .where(thumbnail ? 'u.thumbnail_path' : 'u.path', '=', path)
    .executeTakeFirst()
}

/** Whether a message that is not deleted for everyone, in a chat the user is a member of, carries this path. */
export async function isSharedWith(db: Db, path: string, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('messages as m')
    .innerJoin('chat_members as cm', (join) => join.onRef('cm.chat_id', '=', 'm.chat_id').on('cm.user_id', '=', userId))
    .select('m.id')
    .where('m.file_path', '=', path)
    .where('m.deleted_for_all', '=', 0)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

export function insertSession(db: Db, row: UploadSessionRow) {
  return db.insertInto('upload_sessions').values(row).execute()
}

export function findOwnSession(db: Db, ownerId: number, id: string): Promise<UploadSessionRow | undefined> {
  return db.selectFrom('upload_sessions').selectAll().where('id', '=', id).where('owner_id', '=', ownerId).executeTakeFirst()
}

export function extendSession(db: Db, id: string, expiresAt: number) {
  return db.updateTable('upload_sessions').set({ expires_at: expiresAt }).where('id', '=', id).execute()
}

export function deleteSession(db: Db, id: string) {
  return db.deleteFrom('upload_sessions').where('id', '=', id).execute()
}

/** Expired sessions, oldest first; served by the expires_at index. */
export function listExpiredSessions(db: Db, now: number, limit: number) {
  return db
    .selectFrom('upload_sessions')
    .select(['id', 'part_key'])
    .where('expires_at', '<', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute()
}
