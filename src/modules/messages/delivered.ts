/**
 * delivered_at: the first time a recipient's device is handed a message. Marks are batched (one
 * UPDATE per FLUSH_MS at most) so live delivery never waits on the database; the UPDATE only
 * touches messages not marked before.
 */
import type { AppContext } from '../../context.js'
import { markDelivered } from './repo.js'

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
      .then(() => markDelivered(this.ctx.db, ids, now))
      .catch((err) => this.ctx.log.warn({ err, count: ids.length }, 'could not record delivered_at'))
    return this.flushing
  }
}
