/**
 * A lane: requests that must be done in the order they came (a socket's sends to one chat). Each
 * starts once the one before it has finished, unless that one says earlier that its order is fixed
 * (`placed`: its write is queued where writes run in the order queued, as a group commit's are).
 * Then the next may start and queue its own write behind it, so that several sends of one chat
 * share a commit (and their frames one write to each socket) instead of one commit each.
 *
 * A placed request may still leave the queue for a path that runs later (the general path of a
 * send). It then `defer`s: it waits until every earlier request of the lane is done, and every
 * later one already queued behind it sees `inOrder()` false and defers too, so none overtakes it.
 */
export interface Turn {
  /** the lane this request runs in (for identity only: a batcher keeps one lane's requests out of two batches at once) */
  readonly lane: object
  /** This request's order can no longer change: the next request of the lane may start. */
  placed(): void
  /** false once an earlier request of the lane still in progress has deferred: this one must defer as well. */
  inOrder(): boolean
  /**
   * This request goes on by a path that runs later: later requests of the lane defer too. Marks it
   * at once (call it synchronously where the decision is made); resolves once every earlier request
   * of the lane is done.
   */
  defer(): Promise<void>
}

interface Entry {
  deferred: boolean
  /** settles (never rejects) when the request is done */
  done: Promise<void>
}

export class Lane {
  /** requests started or waiting, oldest first */
  private readonly entries: Entry[] = []
  /** opens when the newest request has been placed or is done: the next may start */
  private gate: Promise<void> = Promise.resolve()

  /** No request is waiting or in progress. */
  get idle(): boolean {
    return this.entries.length === 0
  }

  /** Runs `task` in its turn; settles as the task does. */
  run<T>(task: (turn: Turn) => Promise<T>): Promise<T> {
    const entry: Entry = { deferred: false, done: Promise.resolve() }
    let open!: () => void
    const start = this.gate
    this.gate = new Promise<void>((resolve) => (open = resolve))
    this.entries.push(entry)
    const earlier = () => this.entries.slice(0, this.entries.indexOf(entry))
    const turn: Turn = {
      lane: this,
      placed: () => open(),
      inOrder: () => !earlier().some((e) => e.deferred),
      defer: () => {
        // (the next request starts only once this one is done, unless this one was placed)
        entry.deferred = true
        return Promise.all(earlier().map((e) => e.done)).then(() => undefined)
      },
    }
    const result = start.then(() => task(turn))
    entry.done = result.then(
      () => this.finish(entry, open),
      () => this.finish(entry, open),
    )
    return result
  }

  private finish(entry: Entry, open: () => void) {
    open()
    this.entries.splice(this.entries.indexOf(entry), 1)
  }
}
