/** The file collector's SQL (collect.ts): who still references an upload, and the deletes. */
import type { Db } from '../../db/database.js'
import { isForeignKeyViolation } from '../../db/errors.js'
import type { Database } from '../../db/tables.js'

type Referrer = { [T in keyof Database]: { table: T; column: keyof Database[T] & string } }[keyof Database]

/**
 * Every column that stores an upload's path. A module that stores one adds it here (each is
 * indexed, so asking costs one probe per path).
 */
const REFERRERS: readonly Referrer[] = [
  { table: 'messages', column: 'file_path' },
  { table: 'scheduled_messages', column: 'file_path' },
  { table: 'users', column: 'avatar' },
  { table: 'chats', column: 'avatar' },
  { table: 'stories', column: 'media_path' },
  { table: 'stories', column: 'music_path' },
  { table: 'user_music', column: 'file_path' },
]

/** Of these paths, the ones some record still references. */
export async function referenced(db: Db, paths: readonly string[]): Promise<Set<string>> {
  const used = new Set<string>()
  if (paths.length === 0) return used
  for (const { table, column } of REFERRERS) {
    const left = paths.filter((path) => !used.has(path))
    if (left.length === 0) break
    // the union type of referrers is too wide for Kysely to follow; each pair is a real column
    // biome-ignore lint/suspicious/noExplicitAny: see above
    const rows = (await (db as Db & { selectFrom(t: string): any })
      .selectFrom(table)
      .select(`${column} as path`)
      .where(column, 'in', left)
      .distinct()
      .execute()) as { path: string }[]
    for (const row of rows) used.add(row.path)
  }
  return used
}

/** Removes the uploads at these paths, answering their objects' hashes. */
export function deleteUploads(db: Db, paths: readonly string[]) {
  return db.deleteFrom('file_uploads').where('path', 'in', paths).returning('hash').execute()
}

/**
 * Deletes the object's row when no upload names it, answering its storage keys. An upload of the
 * same bytes that arrives meanwhile wins: its row holds the object (a foreign key), so this
 * delete then fails and the bytes stay.
 */
export async function deleteObjectIfUnused(db: Db, hash: string) {
  try {
    return await db
      .deleteFrom('file_objects')
      .where('hash', '=', hash)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('file_uploads').select('id').where('hash', '=', hash))))
      .returning(['storage_key', 'thumbnail_key', 'size'])
      .executeTakeFirst()
  } catch (error) {
    if (isForeignKeyViolation(error)) return undefined
    throw error
  }
}
