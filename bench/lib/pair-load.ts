/**
 * The load shape socket-sends gives Tern and ejabberd alike: N sender → receiver pairs, each a
 * pair of connections held by the load process; message n goes out on one sender's connection and
 * comes back on its receiver's, the `#<n>` that ends its text naming it. The engine does the
 * scheduling and the counting; a transport (bench/load/socket-sends.ts for Tern's WebSocket,
 * bench/load/xmpp.ts for XMPP) only writes messages and reports what came back, so both servers
 * get exactly the same load.
 *
 *  - closed loop (`window`): every pair keeps `window` messages in flight and sends the next one
 *    as soon as one is done: delivered to the receiver and, where the server acknowledges sends
 *    (Tern's `ack`, sent after the commit), acknowledged too. Its rate is the server's maximum.
 *  - open loop (`rate`): messages fall due at a fixed total rate, round robin over the pairs,
 *    whatever the server answers; send → receipt latency at that rate.
 *
 * Latency runs from writing a message to its receiver reading it (one process, one clock), for
 * messages sent inside the measurement window; throughput counts messages done inside it.
 */
import { threadCpuMs } from './processes.js'
import { summarizeLatencies, type LatencySummary } from './stats.js'

export interface PairLoadSpec {
  mode: 'closed' | 'open'
  /** closed loop: messages each pair keeps in flight */
  window?: number
  /** open loop: messages per second over all pairs */
  rate?: number
  warmupMs: number
  durationMs: number
  /** the server's process: its CPU time in the window is read from /proc (all threads) */
  serverPid?: number
}

export interface PairLoadResult {
  /** messages written inside the measurement window */
  sent: number
  /** messages done (delivered, and acknowledged where the server acknowledges) inside the window */
  done: number
  /** done per second of the window */
  throughput: number
  /**
   * the server's CPU time per message done in the window, µs (null without serverPid): unlike the
   * rate it hardly moves when other processes take the server's core, so it compares servers on a
   * busy machine
   */
  serverCpuPerMessageUs: number | null
  /** the share of its core the server used in the window (below 1 at its maximum: it was starved, or waited on the disk) */
  serverCpu: number | null
  /** of all messages written, how many never reached their receiver */
  missing: number
  /** of all messages written, how many were never acknowledged (0 where there are no acks) */
  unacked: number
  /** write → receipt by the peer, messages written in the window */
  latency: LatencySummary
  /** write → acknowledgement, messages written in the window (null where there are no acks) */
  ackLatency: LatencySummary | null
  /** the load process's share of one core in the window (near 1: the load, not the server, may be the limit) */
  cpu: number
}

/**
 * At a fixed rate, a server that used this share of its core or more was saturated: its CPU per
 * message is then the core divided by the rate (it shares its commits and writes among fewer
 * messages while it has time to spare, and among more once it has none), so it says nothing of
 * what a message costs, and only the latency compares (docs/performance.md, "Comparing two builds").
 */
export const SATURATED = 0.95

const DELIVERED = 1
const ACKED = 2
/** how long messages in flight may take after the window */
const GRACE_MS = 5000

export class PairLoad {
  private readonly sentAt: number[] = []
  private readonly pairOf: number[] = []
  private readonly flags: number[] = []
  private readonly latencies: number[] = []
  private readonly ackLatencies: number[] = []
  private mode: 'closed' | 'open' = 'closed'
  private next = 0
  private doneCount = 0
  private sentInWindow = 0
  private doneInWindow = 0
  private delivered = 0
  private ackedCount = 0
  private measureFrom = Infinity
  private end = Infinity
  private failure: Error | null = null
  private wake: () => void = () => {}
  private write: (pair: number, n: number) => void = () => {}

  /** `acks`: the server acknowledges each send (a message is done only once acknowledged and delivered). */
  constructor(
    private readonly pairs: number,
    private readonly acks: boolean,
  ) {}

  /** The receiver got message n. */
  deliveredAt(n: number, now = performance.now()) {
    const flags = this.flags[n]
    if (flags === undefined) return this.fail(new Error(`a receiver got message ${n}, which was never sent`))
    if (flags & DELIVERED) return this.fail(new Error(`message ${n} reached its receiver twice`))
    this.flags[n] = flags | DELIVERED
    this.delivered++
    if (this.inWindow(this.sentAt[n])) this.latencies.push(now - this.sentAt[n])
    if (!this.acks || flags & ACKED) this.done(n, now)
  }

  /** The server acknowledged message n (stored). */
  ackedAt(n: number, now = performance.now()) {
    const flags = this.flags[n]
    if (flags === undefined) return this.fail(new Error(`an ack for message ${n}, which was never sent`))
    if (flags & ACKED) return this.fail(new Error(`message ${n} was acknowledged twice`))
    this.flags[n] = flags | ACKED
    this.ackedCount++
    if (this.inWindow(this.sentAt[n])) this.ackLatencies.push(now - this.sentAt[n])
    if (flags & DELIVERED) this.done(n, now)
  }

  /** Ends the run with this error (a refused send, a closed connection): the load script throws it. */
  fail(error: Error) {
    this.failure ??= error
    this.wake()
  }

  /** Runs the load, `write(pair, n)` putting message n on pair's sender connection. */
  async run(spec: PairLoadSpec, write: (pair: number, n: number) => void): Promise<PairLoadResult> {
    if (this.failure) throw this.failure
    this.write = write
    this.mode = spec.mode
    const start = performance.now()
    this.measureFrom = start + spec.warmupMs
    this.end = this.measureFrom + spec.durationMs
    const serverCpuMs = () => (spec.serverPid ? [...threadCpuMs(spec.serverPid).values()].reduce((sum, ms) => sum + ms, 0) : 0)
    let cpuStart = { cpu: process.cpuUsage(), wall: this.measureFrom, server: 0, done: 0 }
    let cpu = 0
    // the server's CPU time, the wall time and the messages done in the window (read when it ends)
    const server = { ms: 0, wallMs: 0, done: 0 }
    const cpuTimers = [
      setTimeout(
        () => (cpuStart = { cpu: process.cpuUsage(), wall: performance.now(), server: serverCpuMs(), done: this.doneCount }),
        spec.warmupMs,
      ),
      setTimeout(() => {
        const used = process.cpuUsage(cpuStart.cpu)
        const wallMs = performance.now() - cpuStart.wall
        cpu = (used.user + used.system) / 1000 / wallMs
        Object.assign(server, { ms: serverCpuMs() - cpuStart.server, wallMs, done: this.doneCount - cpuStart.done })
      }, spec.warmupMs + spec.durationMs),
    ]

    if (spec.mode === 'closed') {
      const window = spec.window ?? 1
      if (!(window >= 1)) throw new Error('closed loop needs a window ≥ 1')
      for (let w = 0; w < window; w++) for (let pair = 0; pair < this.pairs; pair++) this.send(pair)
    } else {
      if (!spec.rate || !(spec.rate > 0)) throw new Error('open loop needs a rate')
      const interval = 1000 / spec.rate
      let scheduled = start
      const tick = () => {
        const now = performance.now()
        // Timers fire about once a millisecond: everything that fell due since goes out now.
        for (; scheduled <= now && scheduled < this.end && !this.failure; scheduled += interval) this.send(this.next % this.pairs)
        if (scheduled < this.end && !this.failure) setTimeout(tick, 1)
      }
      tick()
    }

    // Until the window is over, then until everything written is done (or the grace runs out).
    await new Promise<void>((resolve) => {
      this.wake = resolve
      setTimeout(resolve, spec.warmupMs + spec.durationMs)
    })
    const deadline = performance.now() + GRACE_MS
    while (!this.failure && this.unfinished() > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    for (const timer of cpuTimers) clearTimeout(timer)
    if (this.failure) throw this.failure

    const seconds = spec.durationMs / 1000
    return {
      sent: this.sentInWindow,
      done: this.doneInWindow,
      throughput: this.doneInWindow / seconds,
      serverCpuPerMessageUs: spec.serverPid ? (server.ms / server.done) * 1000 : null,
      serverCpu: spec.serverPid ? server.ms / server.wallMs : null,
      missing: this.next - this.delivered,
      unacked: this.acks ? this.next - this.ackedCount : 0,
      latency: summarizeLatencies(this.latencies),
      ackLatency: this.acks ? summarizeLatencies(this.ackLatencies) : null,
      cpu,
    }
  }

  private inWindow(at: number) {
    return at >= this.measureFrom && at < this.end
  }

  private unfinished() {
    return this.next - this.doneCount
  }

  private send(pair: number) {
    const n = this.next++
    const now = performance.now()
    this.sentAt[n] = now
    this.pairOf[n] = pair
    this.flags[n] = 0
    if (this.inWindow(now)) this.sentInWindow++
    this.write(pair, n)
  }

  private done(n: number, now: number) {
    this.doneCount++
    if (this.inWindow(now)) this.doneInWindow++
    // closed loop: the pair's next message replaces this one while the window lasts
    if (this.mode === 'closed' && now < this.end && !this.failure) this.send(this.pairOf[n])
  }
}
