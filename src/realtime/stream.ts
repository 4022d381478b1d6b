/**
 * The ordered streams a gateway socket follows (see gateway.ts): the user's update log or one
 * group's or channel's event log, with the cursor, the catch-up from the log and the replay.
 */
import type { Frame } from './fanout.js'

const REPLAY_BATCH = 500
/** live frames held during a replay; past this they are dropped and read from the log instead */
const MAX_PENDING = 1000

/**
 * One ordered stream of logged frames: the user's updates (by `seq`) or one group's or channel's
 * events (by `chat_seq`). Live frames that continue the cursor go straight out; older ones are
 * skipped; a gap (a frame pub/sub lost, or frames that overtook a replay) triggers a catch-up from
 * the log. A resume moves the cursor and replays everything after it; a resume beyond the log's
 * end (the client's state is not this server's) is answered with `ahead` and the stream goes on
 * from the end, instead of skipping every frame up to the client's number.
 */
export class Stream {
  cursor: number | null = null
  /** while set, live frames wait in `pending` (a replay or the positioning is under way) */
  private syncing: boolean
  /** set when a replay must start over from the cursor (a resume or gap arrived during one) */
  private rerun = false
  /** set when the replay must go on reading after the cursor (a full batch, or `pending` overflowed) */
  private more = false
  /** set by a resume: the cursor came from the client, so the replay checks it is not past the log's end */
  private unverified = false
  private pending: Frame[] = []

  constructor(
    private readonly io: {
      seqOf: (frame: Frame) => number
      load: (after: number, limit: number) => Promise<Frame[]>
      emit: (frame: Frame, text?: string) => void
      /** while a replay runs: false at once if the socket has room, else waits until it has (false: it closed) */
      backlogged: () => false | Promise<boolean>
      /** the log was pruned past the cursor: the client must reload what this stream covers */
      reset: (missedFrom: number, missedTo: number) => void
      /** the log's latest seq */
      latest: () => Promise<number>
      /** the client's cursor was beyond `latest`: it must reload, and the stream goes on from `latest` */
      ahead: (latest: number) => void
      fail: (err: unknown) => void
    },
    /**
     * true for a stream whose position is still unknown: it holds live frames until `open` has
     * found where it starts, so that nothing already logged before then goes out as new
     */
    unopened = false,
  ) {
    this.syncing = unopened
  }

  deliver(frame: Frame, text?: string) {
    if (this.syncing) {
      // Every frame of a stream is in the log before it is published: past the limit, the replay
      // reads the held ones from there rather than holding more for a slow client.
      if (this.pending.length < MAX_PENDING) this.pending.push(frame)
      else {
        this.pending = []
        this.more = true
      }
      return
    }
    const seq = this.io.seqOf(frame)
    if (this.cursor === null || seq === this.cursor + 1) {
      this.cursor = seq
      return this.io.emit(frame, text)
    }
    if (seq <= this.cursor) return
    void this.catchUp()
  }

  /** Holds live frames while `position` finds where the stream starts (unless a resume already set it). */
  async open<T>(position: () => Promise<{ seq: number; value: T }>): Promise<T> {
    this.syncing = true
    try {
      const { seq, value } = await position()
      this.cursor ??= seq
      return value
    } finally {
      this.syncing = false
    }
  }

  /**
   * Replays the log after `from` (or the cursor), then whatever arrived meanwhile. A resume or gap
   * that comes in while a replay runs asks for another pass; a batch read before the cursor moved
   * is discarded and read again from the new cursor.
   */
  async catchUp(from?: number) {
    if (from !== undefined) {
      this.cursor = from
      this.unverified = true
    }
    this.rerun = true
    if (this.syncing) return
    this.syncing = true
    try {
      replay: while (this.rerun || this.more) {
        this.rerun = false
        this.more = false
        const batch = await this.io.load(this.cursor ?? 0, REPLAY_BATCH)
        if (this.rerun) continue
        // Nothing after a cursor the client named: it may be past the end, where it would wait for
        // seqs that come only much later (every live frame before them skipped as old).
        if (this.unverified && batch.length === 0) {
          const latest = await this.io.latest()
          if (this.rerun) continue
          if ((this.cursor ?? 0) > latest) {
            this.cursor = latest
            this.io.ahead(latest)
          }
        }
        this.unverified = false
        // Seqs are contiguous, so a hole before the batch means the log was pruned past the cursor.
        const expected = (this.cursor ?? 0) + 1
        if (batch.length > 0 && this.io.seqOf(batch[0]) > expected) this.io.reset(expected, this.io.seqOf(batch[0]) - 1)
        for (const frame of batch) {
          // a resume moved the cursor while this waited for the client: read again from there
          if (this.rerun) continue replay
          this.io.emit(frame)
          this.cursor = this.io.seqOf(frame)
          const backlogged = this.io.backlogged()
          if (backlogged && !(await backlogged)) {
            // the socket closed: nothing more to replay (a new connection resumes)
            this.rerun = this.more = false
            this.pending = []
            return
          }
        }
        if (batch.length === REPLAY_BATCH) this.more = true
      }
    } catch (err) {
      this.io.fail(err)
    } finally {
      this.syncing = false
    }
    const pending = this.pending
    this.pending = []
    for (const frame of pending) this.deliver(frame)
  }
}
