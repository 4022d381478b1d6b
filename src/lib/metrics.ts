/**
 * The instance's Prometheus metrics (prom-client), one registry per AppContext so that several
 * servers in one process (tests) keep theirs apart. What the hot paths record is cheap: a request
 * is one observation on its label set's histogram, found by key (lib/histogram.ts), a frame
 * sent is one counter increment; everything that needs a query (the update log's size, the job
 * records, the database pool) is read only when /metrics is scraped.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import { LeanHistogram, type Observer } from './histogram.js'

/** Request latency buckets, seconds: the API answers in milliseconds; uploads and long polls take longer. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const LAG_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5]

export interface JobFigures {
  name: string
  runs: number
  failures: number
}

export interface PoolFigures {
  total: number
  idle: number
  waiting: number
}

/** What /metrics reads at scrape time; each part is filled in by whoever owns the figure. */
export interface MetricSources {
  openSockets(): number
  jobs(): JobFigures[]
  pool(): PoolFigures | null
  updateLogRows(): Promise<number>
}

type RequestLabels = 'route' | 'method' | 'status'

export class Metrics {
  readonly registry = new Registry()
  readonly sources: MetricSources = {
    openSockets: () => 0,
    jobs: () => [],
    pool: () => null,
    updateLogRows: async () => 0,
  }

  private readonly requests: LeanHistogram<RequestLabels>
  private readonly framesSent: Counter
  private readonly socketWrites: Counter
  private readonly socketRequests: LeanHistogram<'type' | 'outcome'>
  private readonly fanoutLag: Observer
  private readonly slowRequests: Counter
  private readonly slowQueries: Counter

  constructor() {
    const registers = [this.registry]
    // The event-loop delay histogram samples the loop once a second: at prom-client's 10 ms an idle
    // server woke 100 times a second for it (most of its idle CPU); a stall still shows, and
    // tern_nodejs_eventloop_lag_seconds is measured at each scrape whatever the precision.
    collectDefaultMetrics({ register: this.registry, prefix: 'tern_', eventLoopMonitoringPrecision: 1000 })
    this.requests = new LeanHistogram({
      name: 'tern_http_request_duration_seconds',
      help: 'HTTP requests by route (the route pattern, not the URL), method and status class, with their latency',
      labelNames: ['route', 'method', 'status'],
      buckets: REQUEST_BUCKETS,
      registry: this.registry,
    })
    this.framesSent = new Counter({
      name: 'tern_ws_frames_sent_total',
      help: 'Frames handed to WebSocket clients (events delivered)',
      registers,
    })
    this.socketWrites = new Counter({
      name: 'tern_ws_writes_total',
      help: 'Writes to WebSocket clients: the frames one socket is handed in one burst of work leave in one write',
      registers,
    })
    this.socketRequests = new LeanHistogram({
      name: 'tern_ws_request_duration_seconds',
      help: 'Requests made over the socket (send, edit…) by type and outcome (ack, or the error code), from arrival to answer',
      labelNames: ['type', 'outcome'],
      buckets: REQUEST_BUCKETS,
      registry: this.registry,
    })
    this.fanoutLag = new LeanHistogram({
      name: 'tern_fanout_lag_seconds',
      help: 'From a publish on one instance to its arrival on another (Redis fan-out; clocks of different machines add their skew)',
      labelNames: [],
      buckets: LAG_BUCKETS,
      registry: this.registry,
    }).labels()
    this.slowRequests = new Counter({
      name: 'tern_http_slow_requests_total',
      help: 'Requests slower than SLOW_REQUEST_MS (each is also logged)',
      registers,
    })
    this.slowQueries = new Counter({
      name: 'tern_db_slow_queries_total',
      help: 'Database queries slower than SLOW_QUERY_MS (each is also logged)',
      registers,
    })

    const sources = this.sources
    new Gauge({
      name: 'tern_ws_open_sockets',
      help: 'Open WebSocket connections on this instance',
      registers,
      collect() {
        this.set(sources.openSockets())
      },
    })
    new Gauge({
      name: 'tern_update_log_rows',
      help: 'Rows in the per-user update log (an estimate on PostgreSQL)',
      registers,
      async collect() {
        this.set(await sources.updateLogRows())
      },
    })
    new Gauge({
      name: 'tern_job_runs',
      help: 'Runs of each periodic job on this instance since it started',
      labelNames: ['job'],
      registers,
      collect() {
        for (const job of sources.jobs()) this.set({ job: job.name }, job.runs)
      },
    })
    new Gauge({
      name: 'tern_job_failures',
      help: 'Failed runs of each periodic job on this instance since it started',
      labelNames: ['job'],
      registers,
      collect() {
        for (const job of sources.jobs()) this.set({ job: job.name }, job.failures)
      },
    })
    new Gauge({
      name: 'tern_db_pool_connections',
      help: 'PostgreSQL pool connections by state (absent on SQLite: one connection, no pool)',
      labelNames: ['state'],
      registers,
      collect() {
        const pool = sources.pool()
        if (!pool) return
        this.set({ state: 'total' }, pool.total)
        this.set({ state: 'idle' }, pool.idle)
        this.set({ state: 'waiting' }, pool.waiting)
      },
    })
  }

  /** One finished request. `route` is the route's pattern (null: no route matched). */
  request(route: string | null, method: string, statusCode: number, milliseconds: number) {
    const status = statusCode >= 500 ? '5xx' : statusCode >= 400 ? '4xx' : statusCode >= 300 ? '3xx' : '2xx'
    this.requests.labels(route ?? 'unmatched', method, status).observe(milliseconds / 1000)
  }

  /** `type` is one of the known request types (never a client's string), `outcome` ack or an error code */
  socketRequest(type: string, outcome: string, milliseconds: number) {
    this.socketRequests.labels(type, outcome).observe(milliseconds / 1000)
  }

  frameSent() {
    this.framesSent.inc()
  }

  socketWritten() {
    this.socketWrites.inc()
  }

  fanoutArrived(lagMs: number) {
    this.fanoutLag.observe(Math.max(0, lagMs) / 1000)
  }

  slowRequest() {
    this.slowRequests.inc()
  }

  slowQuery() {
    this.slowQueries.inc()
  }

  text(): Promise<string> {
    return this.registry.metrics()
  }

  get contentType(): string {
    return this.registry.contentType
  }
}
