/**
 * The log's stdout destination: lines are gathered in an array and handed to sonic-boom (pino's
 * asynchronous writer, which deals with partial writes, EAGAIN and exit) about 32 KiB at a time.
 *
 * sonic-boom can buffer by itself (`minLength`), but it appends each line to its pending string
 * and measures that string's UTF-8 length on every write: at 32 KiB that is ~2.5 µs per line, more
 * than formatting the line. A small buffer instead means one write per few lines, each handed to a
 * libuv pool thread that wakes up on the server's core and preempts the event loop (~11 µs per
 * request at 4 KiB). Here a line costs an array push, and a write carries ~100 of them.
 */
import type { DestinationStream } from 'pino'

/** what this needs of sonic-boom */
export interface LineSink {
  write(chunk: string): boolean
  flushSync(): void
}

/** batches flushed when the process exits (one listener for all, however many loggers a test makes) */
const open = new Set<LineBatch>()
let exitHooked = false

export class LineBatch implements DestinationStream {
  /** A batch written out synchronously when the process exits, also after a crash. */
  static flushedOnExit(sink: LineSink, threshold?: number): LineBatch {
    const batch = new LineBatch(sink, threshold)
    open.add(batch)
    if (!exitHooked) {
      exitHooked = true
      process.once('exit', () => {
        for (const pending of open) {
          try {
            pending.flushSync()
          } catch {
            // stdout is gone: nothing more can be written
          }
        }
      })
    }
    return batch
  }

  private lines: string[] = []
  /** characters pending (= bytes for ASCII; only compared with the threshold) */
  private pending = 0

  constructor(
    private readonly sink: LineSink,
    private readonly threshold = 32 * 1024,
  ) {}

  write(line: string): boolean {
    this.lines.push(line)
    this.pending += line.length
    if (this.pending >= this.threshold) this.drain()
    return true
  }

  /** Hands what is pending to the sink, which starts writing it at once. */
  drain() {
    if (this.lines.length === 0) return
    const chunk = this.lines.length === 1 ? this.lines[0] : this.lines.join('')
    this.lines = []
    this.pending = 0
    this.sink.write(chunk)
  }

  /** Everything written before this returns (for exit). */
  flushSync() {
    this.drain()
    this.sink.flushSync()
  }
}
