/**
 * The file collector: when a record that referenced an upload goes (a story deleted or expired),
 * the upload goes too unless something else still references its path, and the stored bytes go
 * when no upload is left for them (uploads of the same content share one object).
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import type { Database } from '../../db/tables.js'
import { isForeignKeyViolation } from '../../db/errors.js'
import { bump } from '../../db/counters.js'

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
    const rows = await (db as Db & { selectFrom(t: string): any })
      .selectFrom(table)
      .select(`${column} as path`)
      .where(column, 'in', left)
      .distinct()
      .execute() as { path: string }[]
    for (const row of rows) used.add(row.path)
  }
  return used
}

export interface Released {
  /** uploads removed (their paths no longer served) */
  uploads: number
  /** stored objects removed with their bytes (and thumbnails) */
  objects: number
}

/**
 * Removes the uploads at these paths that nothing references any more, then the stored bytes no
 * upload is left for. Call after the referencing records were deleted (committed).
 */
export async function releaseUploads(ctx: AppContext, paths: readonly string[]): Promise<Released> {
  const unique = [...new Set(paths)]
  if (unique.length === 0) return { uploads: 0, objects: 0 }
  const used = await referenced(ctx.db, unique)
  const unused = unique.filter((path) => !used.has(path))
  if (unused.length === 0) return { uploads: 0, objects: 0 }
  const gone = await ctx.db.deleteFrom('file_uploads').where('path', 'in', unused).returning('hash').execute()
  const hashes = [...new Set(gone.map((row) => row.hash))]
  let objects = 0
  for (const hash of hashes) {
    const keys = await deleteObjectIfUnused(ctx.db, hash)
    if (!keys) continue
    objects++
    await bump(ctx.db, 'files_bytes', -Number(keys.size))
    await ctx.storage.delete(keys.storage_key)
    if (keys.thumbnail_key) await ctx.storage.delete(keys.thumbnail_key)
  }
  return { uploads: gone.length, objects }
}

/**
 * Deletes the object's row when no upload names it, answering its storage keys. An upload of the
 * same bytes that arrives meanwhile wins: its row holds the object (a foreign key), so this
 * delete then fails and the bytes stay.
 */
async function deleteObjectIfUnused(db: Db, hash: string) {
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
