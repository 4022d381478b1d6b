/**
 * delivered_at: the first time a recipient's device is handed a message. Marks are batched (one
 * UPDATE per FLUSH_MS at most) so live delivery never waits on the database; the UPDATE only
 * touches messages not marked before.
 */
import type { AppContext } from '../../context.js'
import { batched, statement } from '../../db/sqlite-hot.js'
import { markDelivered } from './repo.js'

/**
 * twin: repo.ts markDelivered. On SQLite the marks join the sends' group commit (db/sqlite-hot.ts):
 * the rows they stamp are the newest, on the pages the next sends write anyway, and one prepared
 * statement takes any number of ids (as a JSON array) where a query of its own was built and
 * prepared for every count of ids, then committed alone.
 */
const MARK_DELIVERED = 'update messages set delivered_at = ? where id in (select value from json_each(?)) and delivered_at is null'

async function mark(ctx: AppContext, ids: number[], now: number): Promise<void> {
  if (!ctx.sqlite) return markDelivered(ctx.db, ids, now)
  await batched(ctx, (sqlite) => statement(sqlite, MARK_DELIVERED).run(now, JSON.stringify(ids)))
}

const FLUSH_MS = 20

export class DeliveryMarks {
  private ids = new Set<number>()
  private timer: NodeJS.Timeout | null = null
  private flushing: Promise<void> = Promise.resolve()

  constructor(private ctx: AppContext) {}

  add(messageId: number) {
    this.ids.add(messageId)
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS)
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    if (this.ids.size === 0) return this.flushing
    const ids = [...this.ids]
    this.ids.clear()
    const now = this.ctx.clock.now()
    this.flushing = this.flushing
      .then(() => mark(this.ctx, ids, now))
      .catch((err) => this.ctx.log.warn({ err, count: ids.length }, 'could not record delivered_at'))
    return this.flushing
  }
}
