import { Migrator, type MigrationResultSet } from 'kysely'
import type { Db } from './database.js'
import { migrations } from './migrations/index.js'

export class MigrationError extends Error {}

/** Applies every pending migration; throws on the first failure. Returns the names applied. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'kysely_migration',
    migrationLockTableName: 'kysely_migration_lock',
  })
  const { error, results }: MigrationResultSet = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown'
    throw new MigrationError(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`)
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
