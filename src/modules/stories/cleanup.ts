/**
 * The story cleanup job: removes expired stories with their views, likes, reactions and selected
 * viewers, and their media unless something else still references the file. It works in batches,
 * letting requests in between, so a backlog of 100,000 never holds the event loop for long.
 */
import { setImmediate as yieldToRequests } from 'node:timers/promises'
import type { AppContext } from '../../context.js'
import { releaseUploads } from '../files/index.js'
import * as repo from './repo.js'

/** stories per batch: one DELETE with its cascades, then their files */
export const CLEANUP_BATCH = 250

export interface CleanupResult {
  stories: number
  /** uploads removed (no longer referenced by anything) */
  uploads: number
  /** stored files removed from disk (no upload left for their bytes) */
  files: number
}

export async function cleanupExpiredStories(ctx: AppContext, signal?: AbortSignal): Promise<CleanupResult> {
  const started = performance.now()
  const result: CleanupResult = { stories: 0, uploads: 0, files: 0 }
  while (!signal?.aborted) {
    const gone = await repo.deleteExpired(ctx.db, ctx.clock.now(), CLEANUP_BATCH)
    if (gone.length === 0) break
    const released = await releaseUploads(
      ctx,
      gone.flatMap((story) => (story.music_path ? [story.media_path, story.music_path] : [story.media_path])),
    )
    result.stories += gone.length
    result.uploads += released.uploads
    result.files += released.objects
    if (gone.length < CLEANUP_BATCH) break
    await yieldToRequests()
  }
  if (result.stories > 0) {
    ctx.log.info(
      { ...result, duration_ms: Math.round(performance.now() - started) },
      'story cleanup: removed %d expired stories',
      result.stories,
    )
  }
  return result
}
