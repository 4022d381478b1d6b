/**
 * Closed- and open-loop HTTP load over HttpConnection. Both warm up first (JIT, caches) and then
 * measure for a fixed window; latencies are exact (every sample kept), in milliseconds.
 */
import { HttpConnection, type Response } from './http-client.js'
import { threadCpuMs } from './processes.js'
import { summarizeLatencies, type LatencySummary } from './stats.js'

export interface LoadOptions {
  port: number
  connections: number
  warmupMs: number
  durationMs: number
  /** the i-th request, encoded */
  request(i: number): Buffer
  /** the server's process: its CPU time in the window is read from /proc (all threads) */
  serverPid?: number
}

export interface LoadResult {
  /** responses to requests sent inside the measurement window */
  completed: number
  errors: number
  /** status and start of the body of the first failed response */
  firstError: string | null
  /** completed per second of the measurement window */
  throughput: number
  latency: LatencySummary
  /** the load process's share of one core during the window (near 1 means it, not the server, may be the limit) */
  cpu: number
  /**
   * with serverPid: the server's CPU time per completed request in the window (µs), which other
   * processes taking its core hardly move, and the share of its core it used (below 1 at its
   * maximum: it was starved, or waited on the disk)
   */
  server?: { cpuPerRequestUs: number; cpu: number }
}

const serverCpuMs = (pid: number | undefined) => (pid ? [...threadCpuMs(pid).values()].reduce((sum, ms) => sum + ms, 0) : 0)

function cpuMark(serverPid?: number) {
  return { cpu: process.cpuUsage(), wall: performance.now(), server: serverCpuMs(serverPid) }
}

/** Share of one core this process used since `start` (user + system CPU over wall time). */
function cpuShare(start: ReturnType<typeof cpuMark>): number {
  const used = process.cpuUsage(start.cpu)
  return (used.user + used.system) / 1000 / (performance.now() - start.wall)
}

class Recorder {
  readonly latencies: number[] = []
  errors = 0
  firstError: string | null = null
  cpuStart: ReturnType<typeof cpuMark>

  constructor(private readonly serverPid?: number) {
    this.cpuStart = cpuMark(serverPid)
  }

  /** The window starts now. */
  mark() {
    this.cpuStart = cpuMark(this.serverPid)
  }

  record(response: Response, latencyMs: number) {
    if (response.status >= 200 && response.status < 300) {
      this.latencies.push(latencyMs)
      return
    }
    this.errors++
    this.firstError ??= `${response.status} ${response.body.toString('utf8', 0, 300)}`
  }

  result(durationMs: number): LoadResult {
    // Read as the last request of the window completes (closed loop) or the open loop drains:
    // close enough to the window's end for a per-request figure.
    const serverMs = serverCpuMs(this.serverPid) - this.cpuStart.server
    const wallMs = performance.now() - this.cpuStart.wall
    return {
      completed: this.latencies.length,
      errors: this.errors,
      firstError: this.firstError,
      throughput: this.latencies.length / (durationMs / 1000),
      latency: summarizeLatencies(this.latencies),
      cpu: cpuShare(this.cpuStart),
      ...(this.serverPid ? { server: { cpuPerRequestUs: (serverMs / this.latencies.length) * 1000, cpu: serverMs / wallMs } } : {}),
    }
  }
}

async function connectAll(port: number, count: number): Promise<HttpConnection[]> {
  return Promise.all(Array.from({ length: count }, () => HttpConnection.connect(port)))
}

/**
 * Closed loop: each connection sends its next request as soon as the previous one is answered.
 * Measures the server's maximum throughput (and latency at that saturation).
 */
export async function closedLoop(options: LoadOptions): Promise<LoadResult> {
  const connections = await connectAll(options.port, options.connections)
  const measureFrom = performance.now() + options.warmupMs
  const end = measureFrom + options.durationMs
  const recorder = new Recorder(options.serverPid)
  setTimeout(() => recorder.mark(), options.warmupMs)
  let next = 0
  try {
    await Promise.all(
      connections.map(async (connection) => {
        for (;;) {
          const start = performance.now()
          if (start >= end) return
          const response = await connection.request(options.request(next++))
          if (start >= measureFrom) recorder.record(response, performance.now() - start)
        }
      }),
    )
  } finally {
    for (const connection of connections) connection.close()
  }
  return recorder.result(options.durationMs)
}

export interface OpenLoopOptions extends LoadOptions {
  /** requests per second, spread evenly whatever the server's answers (no coordinated omission) */
  rate: number
  /** called when the i-th request is written */
  onSent?(i: number, at: number): void
}

/**
 * Open loop: requests fall due at a fixed rate and go out on the first free connection of a pool.
 * Latency counts from when a request fell due, so time spent queued for a free connection (the
 * server falling behind) is included.
 */
export async function openLoop(options: OpenLoopOptions): Promise<LoadResult> {
  const idle = await connectAll(options.port, options.connections)
  const all = [...idle]
  const start = performance.now()
  const measureFrom = start + options.warmupMs
  const end = measureFrom + options.durationMs
  const interval = 1000 / options.rate
  const recorder = new Recorder(options.serverPid)
  setTimeout(() => recorder.mark(), options.warmupMs)
  const due: number[] = []
  let scheduled = start
  let next = 0
  let inFlight = 0
  let failure: Error | null = null
  let drained: () => void = () => {}

  const send = (connection: HttpConnection, dueAt: number) => {
    const i = next++
    inFlight++
    options.onSent?.(i, performance.now())
    connection.request(options.request(i)).then(
      (response) => {
        if (dueAt >= measureFrom) recorder.record(response, performance.now() - dueAt)
        inFlight--
        idle.push(connection)
        dispatch()
      },
      (error: Error) => {
        failure ??= error
        inFlight--
        dispatch()
      },
    )
  }
  const dispatch = () => {
    while (due.length > 0 && idle.length > 0) send(idle.pop()!, due.shift()!)
    if (inFlight === 0 && due.length === 0 && (scheduled >= end || failure)) drained()
  }
  const tick = () => {
    const now = performance.now()
    // Timers fire about once a millisecond: everything that fell due since is due now.
    for (; scheduled <= now && scheduled < end; scheduled += interval) due.push(now)
    dispatch()
    if (scheduled < end && !failure) setTimeout(tick, 1)
  }
  try {
    await new Promise<void>((resolve) => {
      drained = resolve
      tick()
    })
  } finally {
    for (const connection of all) connection.close()
  }
  if (failure) throw failure
  return recorder.result(options.durationMs)
}
