/** What a scenario is given and returns, and the checks every load result goes through. */
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
