/**
 * The file collector: when a record that referenced an upload goes (a story deleted or expired),
 * the upload goes too unless something else still references its path, and the stored bytes go
 * when no upload is left for them (uploads of the same content share one object).
 */
import type { AppContext } from '../../context.js'
import { bump } from '../../db/counters.js'
import * as repo from './collect-repo.js'

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
  const used = await repo.referenced(ctx.db, unique)
  const unused = unique.filter((path) => !used.has(path))
  if (unused.length === 0) return { uploads: 0, objects: 0 }
  const gone = await repo.deleteUploads(ctx.db, unused)
  const hashes = [...new Set(gone.map((row) => row.hash))]
  let objects = 0
  for (const hash of hashes) {
    const keys = await repo.deleteObjectIfUnused(ctx.db, hash)
    if (!keys) continue
    objects++
    await bump(ctx.db, 'files_bytes', -Number(keys.size))
    await ctx.storage.delete(keys.storage_key)
    if (keys.thumbnail_key) await ctx.storage.delete(keys.thumbnail_key)
  }
  return { uploads: gone.length, objects }
}
