/**
 * `npm run soak`: Tern (the compiled dist/, on SQLite) under a steady load for SOAK_MINUTES: message
 * sends at half the measured send capacity (a closed-loop measurement of SOAK_CAPACITY_SECONDS
 * first, or SOAK_RATE), while SOAK_SOCKETS WebSockets connect, live 5–30 s and leave. Every
 * SOAK_INTERVAL_SECONDS the server's RSS and heap are read from its /metrics (METRICS_TOKEN) and
 * the interval's p50/p99 recorded. At the end it prints the series, charts of RSS and heap, their
 * least-squares trend over the last 2/3 of the run, the p99 drift and the error count, and exits
 * non-zero when a check fails:
 *
 *   RSS and heap trend over the last 2/3   < SOAK_TREND_MAX_PERCENT (5) of their mean
 *   p99, last interval vs first after warm-up   ≤ SOAK_P99_DRIFT_MAX (1.5) times, + 2 ms of slack
 *   errors (sends, sockets)                = 0
 *
 *   SOAK_MINUTES=30  SOAK_RATE (sends/s; default: half the measured capacity)  SOAK_SOCKETS=50
 */
import fs from 'node:fs'
import path from 'node:path'
import { registerMany, sendRequests } from '../lib/api.js'
import { ForeignLoad } from '../lib/foreign-load.js'
import { LoadProcess, runLoad } from '../lib/load.js'
import type { LoadResult } from '../lib/load-engine.js'
import { codeRevision, describeMachine, machineLine } from '../lib/machine.js'
import { makeDataDir, removeDataDir, ROOT } from '../lib/processes.js'
import { fmt } from '../lib/scenario.js'
import { startServer } from '../lib/server.js'
import type { IntervalResult } from './load.js'
import { chart, trend, type Point } from './series.js'

function positive(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!(value > 0)) throw new Error(`${name} must be a positive number (got ${JSON.stringify(raw)})`)
  return value
}

const MINUTES = positive('SOAK_MINUTES', 30)
const INTERVAL_MS = positive('SOAK_INTERVAL_SECONDS', 10) * 1000
const CAPACITY_MS = positive('SOAK_CAPACITY_SECONDS', 10) * 1000
const SOCKETS = Math.round(positive('SOAK_SOCKETS', 50))
const TREND_MAX = positive('SOAK_TREND_MAX_PERCENT', 5) / 100
const DRIFT_MAX = positive('SOAK_P99_DRIFT_MAX', 1.5)
/** p99 below a few ms moves by whole milliseconds with the machine's scheduling: this much is not drift */
const DRIFT_SLACK_MS = 2
/** sender → receiver pairs, each in its own personal chat (as send-throughput) */
const PAIRS = 16
const METRICS_TOKEN = 'soak-metrics-token-0123456789abcdef'

const MiB = 1024 * 1024
const log = (line: string) => process.stderr.write(`${line}\n`)

interface Sample {
  t: number
  rss: number
  heap: number
  /** RSS as /proc tells it, beside what the process reports */
  procRss: number
  /** the SQLite WAL file's size: whether checkpoints keep up and the WAL starts over */
  wal: number
  result: IntervalResult
}

const fileSize = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0)

/** One sample value of /metrics text (`name value`). */
function metric(text: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)
  if (!match) throw new Error(`/metrics has no ${name}`)
  return Number(match[1])
}

async function main() {
  if (!fs.existsSync(path.join(ROOT, 'dist/src/main.js'))) throw new Error('dist/ is missing: run `npm run build` (npm run soak does)')
  const machine = describeMachine()
  log(machineLine(machine))
  const foreign = new ForeignLoad()
  const dataDir = makeDataDir('soak')
  const server = await startServer(machine, 'tern', dataDir, { env: { METRICS_TOKEN, LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn' } })
  let load: LoadProcess | null = null
  try {
    const users = await registerMany(server.url, 'soak', PAIRS * 2)
    const requests = await sendRequests(server.url, users, PAIRS)

    let rate = Number(process.env.SOAK_RATE ?? 0)
    if (!(rate > 0)) {
      log(`measuring the send capacity for ${CAPACITY_MS / 1000} s (closed loop, 32 connections)…`)
      const max = await runLoad<LoadResult>(machine, 'http', {
        mode: 'closed',
        port: server.port,
        connections: 32,
        warmupMs: 2000,
        durationMs: CAPACITY_MS,
        requests,
      })
      if (max.errors > 0) throw new Error(`capacity run: ${max.errors} failed sends; first: ${max.firstError}`)
      rate = Math.max(1, Math.round(max.throughput / 2))
      log(`  capacity ${fmt(max.throughput)} sends/s: the soak runs at ${fmt(rate)}/s`)
    } else log(`SOAK_RATE: ${fmt(rate)} sends/s`)

    const intervals = Math.max(3, Math.round((MINUTES * 60_000) / INTERVAL_MS))
    log(
      `soak: ${intervals} intervals of ${INTERVAL_MS / 1000} s (${MINUTES} min) at ${fmt(rate)} sends/s, ${SOCKETS} sockets coming and going`,
    )
    load = LoadProcess.start(machine, '../soak/load')
    await load.request({
      kind: 'sockets',
      port: server.port,
      tokens: users.map((u) => u.token),
      count: SOCKETS,
      minLifeMs: 5_000,
      maxLifeMs: 30_000,
    })

    const samples: Sample[] = []
    const started = Date.now()
    for (let i = 0; i < intervals; i++) {
      const result = await load.request<IntervalResult>({
        kind: 'interval',
        port: server.port,
        rate,
        connections: 64,
        durationMs: INTERVAL_MS,
        requests,
      })
      const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
      const sample = {
        t: (Date.now() - started) / 1000,
        rss: metric(text, 'tern_process_resident_memory_bytes'),
        heap: metric(text, 'tern_nodejs_heap_size_used_bytes'),
        procRss: server.rss(),
        wal: fileSize(path.join(dataDir, 'tern.db-wal')),
        result,
      }
      samples.push(sample)
      log(`  ${line(sample)}`)
    }
    const socketTotals = await load.request<{ opened: number; closed: number; frames: number; errors: number }>({ kind: 'stop' })

    // ---------------------------------------------------------------- the report
    const warmup = Math.max(1, Math.ceil(intervals / 10))
    const window = samples.slice(Math.floor(samples.length / 3))
    const rssTrend = trend(window.map((s) => ({ t: s.t, value: s.rss })))
    const heapTrend = trend(window.map((s) => ({ t: s.t, value: s.heap })))
    const firstP99 = samples[Math.min(warmup, samples.length - 1)].result.latency.p99
    const lastP99 = samples.at(-1)!.result.latency.p99
    const sendErrors = samples.reduce((sum, s) => sum + s.result.errors, 0)
    const socketErrors = socketTotals.errors
    const firstError =
      samples.find((s) => s.result.firstError)?.result.firstError ??
      samples.find((s) => s.result.sockets.firstError)?.result.sockets.firstError ??
      null
    const sends = samples.reduce((sum, s) => sum + s.result.completed, 0)

    const checks = [
      {
        name: `RSS trend over the last ${fmt(window.at(-1)!.t - window[0].t)} s`,
        value: `${(rssTrend.share * 100).toFixed(2)}% (${fmt((rssTrend.slopePerSecond * 60) / 1024, 1)} KiB/min)`,
        pass: Math.abs(rssTrend.share) < TREND_MAX,
        target: `< ${TREND_MAX * 100}%`,
      },
      {
        name: `heap trend over the last ${fmt(window.at(-1)!.t - window[0].t)} s`,
        value: `${(heapTrend.share * 100).toFixed(2)}% (${fmt((heapTrend.slopePerSecond * 60) / 1024, 1)} KiB/min)`,
        pass: Math.abs(heapTrend.share) < TREND_MAX,
        target: `< ${TREND_MAX * 100}%`,
      },
      {
        name: `p99 drift (interval ${samples.length} vs ${warmup + 1}, after ${warmup} of warm-up)`,
        value: `${fmt(firstP99, 2)} → ${fmt(lastP99, 2)} ms (${(lastP99 / firstP99).toFixed(2)}x)`,
        pass: lastP99 <= firstP99 * DRIFT_MAX + DRIFT_SLACK_MS,
        target: `≤ ${DRIFT_MAX}x + ${DRIFT_SLACK_MS} ms`,
      },
      {
        name: 'errors (sends, sockets)',
        value: `${sendErrors}, ${socketErrors}${firstError ? ` (first: ${firstError.slice(0, 160)})` : ''}`,
        pass: sendErrors === 0 && socketErrors === 0,
        target: '0',
      },
    ]

    const foreignShare = foreign.share()
    foreign.stop()
    console.log(`\n${machineLine(machine)}`)
    console.log(`code: ${codeRevision(ROOT) ?? 'unknown revision'} (as built into dist/)`)
    console.log(
      `soak: ${MINUTES} min, ${samples.length} intervals of ${INTERVAL_MS / 1000} s at ${fmt(rate)} sends/s (${fmt(sends)} sends answered), ${SOCKETS} sockets (${fmt(socketTotals.opened)} opened, ${fmt(socketTotals.closed)} closed, ${fmt(socketTotals.frames)} frames received)`,
    )
    console.log(
      `other processes used ${(foreignShare * 100).toFixed(1)}% of the machine's CPU during the run${foreignShare > 0.05 ? ': latencies are noisy, run again on a quiet machine' : ''}\n`,
    )
    console.log(
      [
        '   t (s) | RSS MiB | /proc | heap MiB | WAL MiB | sends/s |  p50 ms |  p99 ms | errors | sockets open/+/-',
        ...samples.map(line),
      ].join('\n'),
    )
    console.log(
      `\n${chart(
        'RSS',
        samples.map((s) => ({ t: s.t, value: s.rss / MiB })),
        'MiB',
      )}`,
    )
    console.log(
      `\n${chart(
        'heap used',
        samples.map((s) => ({ t: s.t, value: s.heap / MiB })),
        'MiB',
      )}`,
    )
    console.log(
      `\n${chart(
        'p99',
        samples.map((s): Point => ({ t: s.t, value: s.result.latency.p99 })),
        'ms',
      )}\n`,
    )
    for (const check of checks) console.log(`${check.pass ? 'pass' : 'FAIL'}  ${check.name}: ${check.value} (target ${check.target})`)
    if (checks.some((check) => !check.pass)) process.exitCode = 1
  } finally {
    await load?.close()
    await server.stop()
    removeDataDir(dataDir)
  }
}

function line(s: Sample): string {
  const r = s.result
  return [
    fmt(s.t).padStart(8),
    fmt(s.rss / MiB, 1).padStart(7),
    fmt(s.procRss / MiB, 1).padStart(5),
    fmt(s.heap / MiB, 1).padStart(8),
    fmt(s.wal / MiB, 1).padStart(7),
    fmt(r.throughput).padStart(7),
    fmt(r.latency.p50, 2).padStart(7),
    fmt(r.latency.p99, 2).padStart(7),
    String(r.errors + r.sockets.errors).padStart(6),
    `${r.sockets.open}/+${r.sockets.opened}/-${r.sockets.closed}`,
  ].join(' | ')
}

main().catch((error) => {
  console.error(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  process.exit(1)
})
