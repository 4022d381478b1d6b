import type { AppContext } from '../context.js'
import { migrateToLatest } from '../db/migrate.js'
import { iso } from '../lib/time.js'
import * as users from '../modules/users/service.js'

export async function userList(ctx: AppContext, [search]: string[]): Promise<void> {
  await migrateToLatest(ctx.db)
  const { rows, total } = await users.listUsers(ctx, search, 1, 100)
  const table = [['id', 'username', 'email', 'admin', 'active', 'created_at']]
  for (const u of rows) {
    table.push([String(u.id), u.username, u.email ?? '', u.is_admin ? 'yes' : 'no', u.is_active ? 'yes' : 'no', iso(u.created_at)])
  }
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)))
  for (const row of table) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i])).join('  ')}\n`)
  process.stdout.write(`${rows.length} of ${total} users\n`)
}
