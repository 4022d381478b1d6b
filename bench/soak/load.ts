/**
 * Load process of the soak (bench/soak/run.ts), on the load core, driven over IPC (lib/load.ts):
 *
 *   {kind: 'sockets', …}   starts the socket churn: `count` WebSockets of the given users, each
 *                          living a random while, then closing and replaced by a new one
 *   {kind: 'interval', …}  one interval of open-loop sends at `rate` (lib/load-engine.ts openLoop),
 *                          answered with its latency summary, errors and what the sockets did meanwhile
 *   {kind: 'stop'}         closes every socket; answers the totals
 */
import WebSocket from 'ws'
import { V2 } from '../lib/api.js'
import { encodeRequest, type RequestSpec } from '../lib/http-client.js'
import { openLoop, type LoadResult } from '../lib/load-engine.js'
import { serve } from '../load/ipc.js'

export interface SocketsSpec {
  kind: 'sockets'
  port: number
  tokens: string[]
  count: number
  minLifeMs: number
  maxLifeMs: number
}

export interface IntervalSpec {
  kind: 'interval'
  port: number
  rate: number
  connections: number
  durationMs: number
  requests: RequestSpec[]
}

export interface SocketFigures {
  opened: number
  closed: number
  /** frames received (message.new among them) */
  frames: number
  /** failed upgrades, no ready in time, closes the client did not ask for, error frames */
  errors: number
  firstError: string | null
  open: number
}

export interface IntervalResult extends LoadResult {
  sockets: SocketFigures
}

const READY_TIMEOUT_MS = 10_000

class Churn {
  private live = new Set<WebSocket>()
  private stopped = false
  private figures: SocketFigures = { opened: 0, closed: 0, frames: 0, errors: 0, firstError: null, open: 0 }
  private totals = { opened: 0, closed: 0, frames: 0, errors: 0 }
  private next = 0

  constructor(private readonly spec: SocketsSpec) {
    // staggered, so that the sockets do not all come and go at once
    for (let i = 0; i < spec.count; i++) setTimeout(() => this.open(), Math.round((i * spec.minLifeMs) / spec.count))
  }

  private error(what: string) {
    this.figures.errors++
    this.totals.errors++
    this.figures.firstError ??= what
  }

  private open() {
    if (this.stopped) return
    const token = this.spec.tokens[this.next++ % this.spec.tokens.length]
    const ws = new WebSocket(`ws://127.0.0.1:${this.spec.port}${V2}/ws`, { headers: { authorization: `Bearer ${token}` } })
    let ready = false
    let leaving = false
    const readyTimer = setTimeout(() => {
      if (ready) return
      this.error('no ready frame within 10 s')
      ws.terminate()
    }, READY_TIMEOUT_MS)
    ws.on('message', (raw) => {
      this.figures.frames++
      this.totals.frames++
      const text = String(raw)
      if (!ready) {
        if (!text.startsWith('{"type":"ready"')) this.error(`first frame is not ready: ${text.slice(0, 200)}`)
        ready = true
        clearTimeout(readyTimer)
        this.figures.opened++
        this.totals.opened++
        this.live.add(ws)
        const life = this.spec.minLifeMs + Math.random() * (this.spec.maxLifeMs - this.spec.minLifeMs)
        setTimeout(() => {
          leaving = true
          ws.close(1000, 'leaving')
        }, life)
      } else if (text.startsWith('{"type":"error"')) this.error(`error frame: ${text.slice(0, 200)}`)
    })
    ws.on('unexpected-response', (_req, res) => this.error(`upgrade refused: ${res.statusCode}`))
    ws.on('error', (err) => this.error(`socket error: ${err.message}`))
    ws.on('close', (code) => {
      clearTimeout(readyTimer)
      if (this.live.delete(ws)) {
        this.figures.closed++
        this.totals.closed++
      }
      if (!leaving && !this.stopped) this.error(`closed by the server: ${code}`)
      // the one who left is replaced
      if (!this.stopped) setTimeout(() => this.open(), 10)
    })
  }

  /** what happened since the last take */
  take(): SocketFigures {
    const taken = { ...this.figures, open: this.live.size }
    this.figures = { opened: 0, closed: 0, frames: 0, errors: 0, firstError: null, open: 0 }
    return taken
  }

  async stop() {
    this.stopped = true
    const closing = [...this.live].map(
      (ws) =>
        new Promise<void>((resolve) => {
          ws.once('close', () => resolve())
          ws.close(1000, 'done')
          setTimeout(() => {
            ws.terminate()
            resolve()
          }, 2000)
        }),
    )
    await Promise.all(closing)
    return this.totals
  }
}

let churn: Churn | null = null

serve(async (message: SocketsSpec | IntervalSpec | { kind: 'stop' }) => {
  if (message.kind === 'sockets') {
    churn = new Churn(message)
    return null
  }
  if (message.kind === 'stop') return churn ? churn.stop() : null
  const encoded = message.requests.map((request) => encodeRequest(`127.0.0.1:${message.port}`, request))
  const result = await openLoop({
    port: message.port,
    connections: message.connections,
    warmupMs: 0,
    durationMs: message.durationMs,
    rate: message.rate,
    request: (i) => encoded[i % encoded.length],
  })
  return {
    ...result,
    sockets: churn?.take() ?? { opened: 0, closed: 0, frames: 0, errors: 0, firstError: null, open: 0 },
  } satisfies IntervalResult
})
