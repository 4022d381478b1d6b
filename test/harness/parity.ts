/**
 * Comparing two servers that ran the same script (the send paths' parity tests): a clock the
 * script sets, so both see the same instants, and the rows a script leaves, in a stable order.
 */
import type { Clock } from '../../src/lib/time.js'
import type { TestServer } from './server.js'
import { updateLog } from './update-log.js'

export class ScriptClock implements Clock {
  at = Date.UTC(2026, 10, 24, 12, 0, 0)
  now() {
    return this.at
  }
}

type Table = 'messages' | 'chats' | 'chat_members' | 'chat_events' | 'scheduled_messages' | 'blocked_users'

/**
 * Each table's rows as JSON, sorted whatever their key, and the update log wherever its rows are
 * now (SQLite moves its newest rows in a while). `ignore`: columns that differ by design (random
 * invite codes).
 */
export async function rowsOf(server: TestServer, tables: readonly Table[], ignore: readonly string[] = []) {
  const out: Record<string, string[]> = {}
  for (const table of tables) {
    const rows = await server.ctx.db.selectFrom(table).selectAll().execute()
    out[table] = rows.map((row) => JSON.stringify({ ...row, ...Object.fromEntries(ignore.map((column) => [column, undefined])) })).sort()
  }
  out.updates = (await updateLog(server.ctx.db, server.ctx.dialect)).map((row) => JSON.stringify(row))
  return out
}
