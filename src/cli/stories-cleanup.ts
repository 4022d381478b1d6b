import type { AppContext } from '../context.js'
import { migrateToLatest } from '../db/migrate.js'
import { cleanupExpiredStories } from '../modules/stories/index.js'

/** `stories:cleanup`: the story cleanup job, run once by hand. */
export async function storiesCleanup(ctx: AppContext): Promise<void> {
  await migrateToLatest(ctx.db)
  const removed = await cleanupExpiredStories(ctx)
  process.stdout.write(
    `removed ${removed.stories} expired stories, ${removed.uploads} uploads no longer used, ${removed.files} stored files\n`,
  )
}
