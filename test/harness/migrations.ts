/**
 * For migration tests: a fresh, empty database (SQLite, or PostgreSQL under TEST_DATABASE_URL)
 * and a Migrator over every migration, so a test can stop before one, plant rows and go on.
 * Closed and dropped when the test file ends.
 */
import { after } from 'node:test'
import { Migrator, type Kysely } from 'kysely'
import { createDatabase } from '../../src/db/database.js'
import { migrations } from '../../src/db/migrations/index.js'
import { createTestDatabase, tempDir } from './database.js'

export async function migrationDatabase() {
  const testDb = await createTestDatabase(tempDir())
  const handle = createDatabase(testDb.url)
  after(async () => {
    await handle.close()
    await testDb.drop()
  })
  const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } })
  return { handle, db: handle.db, migrator }
}

/**
 * Users planted straight into the `users` table (as a migration test needs them: no API at that
 * schema), one per name; their ids in the same order.
 */
export async function plantUsers(db: Kysely<any>, names: string[], now: number): Promise<number[]> {
  const rows = await db
    .insertInto('users')
    .values(names.map((name) => ({ username: name, display_name: name, password_hash: 'x', created_at: now })))
    .returning('id')
    .execute()
  return rows.map((row: { id: number }) => row.id)
}
