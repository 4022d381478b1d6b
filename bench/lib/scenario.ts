/** What a scenario is given and returns, and the checks every load result goes through. */
import type { HttpLoadSpec } from '../load/http.js'
import type { RequestSpec } from './http-client.js'
import { runLoad } from './load.js'
import type { LoadResult } from './load-engine.js'
import type { Machine } from './machine.js'
import type { Row } from './report.js'

export interface BenchContext {
  machine: Machine
  /** measured runs per figure (BENCH_RUNS) */
  runs: number
  /** length of one measured load window in ms (BENCH_DURATION seconds) */
  durationMs: number
  /** warm-up before each measured window in ms */
  warmupMs: number
  /** a progress line on stderr (the table itself goes to stdout) */
  log(line: string): void
}

export interface Scenario {
  name: string
  /** one line for `--help` */
  summary: string
  run(ctx: BenchContext): Promise<Row[]>
}

/** Fails on any error response; warns when the load core, not the server, may have been the limit. */
export function checkLoad(ctx: BenchContext, label: string, result: LoadResult): LoadResult {
  if (result.errors > 0) throw new Error(`${label}: ${result.errors} failed requests; first: ${result.firstError}`)
  if (result.cpu > 0.9) ctx.log(`  warning: ${label}: the load process used ${Math.round(result.cpu * 100)}% of its core`)
  return result
}

export const fmt = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

/**
 * Latency of one request at a time (one connection, closed loop), in a window of half the usual
 * length (at least 2 s): the figure is the service time of one request, not a queue.
 */
export async function serviceTime(ctx: BenchContext, port: number, label: string, requests: RequestSpec[]): Promise<LoadResult> {
  const result = await runLoad<LoadResult>(ctx.machine, 'http', {
    mode: 'closed',
    port,
    connections: 1,
    warmupMs: Math.min(1000, ctx.warmupMs),
    durationMs: Math.max(2000, ctx.durationMs / 2),
    requests,
  })
  return checkLoad(ctx, label, result)
}

/**
 * One closed-loop window of the scenario's usual warm-up and length, `connections` keeping
 * `requests` going against the server on `port` (a maximum), checked; `spec` adds or overrides
 * fields (an open loop's rate, the server's pid for its CPU time).
 */
export async function closedLoad(
  ctx: BenchContext,
  port: number,
  connections: number,
  requests: RequestSpec[],
  label: string,
  spec: Partial<HttpLoadSpec> = {},
): Promise<LoadResult> {
  const result = await runLoad<LoadResult>(ctx.machine, 'http', {
    mode: 'closed',
    port,
    connections,
    warmupMs: ctx.warmupMs,
    durationMs: ctx.durationMs,
    requests,
    ...spec,
  })
  return checkLoad(ctx, label, result)
}
