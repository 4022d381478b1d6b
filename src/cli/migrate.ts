import type { AppContext } from '../context.js'
import { migrateToLatest } from '../db/migrate.js'

export async function migrate(ctx: AppContext): Promise<void> {
  const applied = await migrateToLatest(ctx.db)
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n')
}
