import type { AppContext } from '../context.js'
import { migrateToLatest } from '../db/migrate.js'
import { iso } from '../lib/time.js'
import * as users from '../modules/users/index.js'
import { printTable } from './table.js'

export async function userList(ctx: AppContext, [search]: string[]): Promise<void> {
  await migrateToLatest(ctx.db)
  const { rows, total } = await users.listUsers(ctx, { q: search }, 1, 100)
  const table = [['id', 'username', 'email', 'admin', 'active', 'created_at']]
  for (const u of rows) {
    table.push([String(u.id), u.username, u.email ?? '', u.is_admin ? 'yes' : 'no', u.is_active ? 'yes' : 'no', iso(u.created_at)])
  }
  printTable(table)
  process.stdout.write(`${rows.length} of ${total} users\n`)
}
