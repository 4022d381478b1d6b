/**
 * A bench run's figures as data: `bench/results/<YYYY-MM-DD>-<short commit>.json`, beside the
 * table `npm run bench` prints. Each figure has its runs' median, min and max, its target and the
 * verdict on the median; the file also names the machine, the code and the run's settings, so that
 * runs can be compared later (only runs on the same kind of machine compare).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Machine } from './machine.js'
import { passes, type Row, type Target, type Unit } from './report.js'
import { median } from './stats.js'

export interface ResultFigure {
  scenario: string
  figure: string
  unit: Unit
  median: number | null
  min: number | null
  max: number | null
  /** one value per run; null where a run could not measure it */
  samples: (number | null)[]
  target: Target | null
  /** the median against the target: null without a target */
  verdict: 'pass' | 'fail' | null
}

export interface BenchResults {
  /** UTC date the run started */
  date: string
  startedAt: string
  finishedAt: string
  /** `git rev-parse --short HEAD` of the checkout measured, or null outside one */
  commit: string | null
  /** the commit, and whether src/ differed from it */
  code: string | null
  machine: Machine
  settings: { runs: number; durationSeconds: number; warmupSeconds: number; ternLogLevel: string; nodeFlags: string[] }
  /** the share of the machine's CPU other processes used during the run, and the hypervisor's steal per core */
  otherProcessesShare: number
  steal: number[]
  scenarios: { ran: string[]; failed: string[] }
  figures: ResultFigure[]
}

const finite = (value: number) => (Number.isFinite(value) ? value : null)

export function resultFigure(row: Row): ResultFigure {
  const measured = row.samples.filter(Number.isFinite)
  const pass = passes(row)
  return {
    scenario: row.scenario,
    figure: row.figure,
    unit: row.unit,
    median: measured.length ? finite(median(row.samples)) : null,
    min: measured.length ? Math.min(...measured) : null,
    max: measured.length ? Math.max(...measured) : null,
    samples: row.samples.map(finite),
    target: row.target ?? null,
    verdict: pass === null ? null : pass ? 'pass' : 'fail',
  }
}

/** `<dir>/<date>-<commit>.json`, with `-2`, `-3`… when a run of that day and commit is already there. */
export function resultsPath(dir: string, date: string, commit: string | null): string {
  const stem = `${date}-${commit ?? 'unknown'}`
  let file = path.join(dir, `${stem}.json`)
  for (let n = 2; fs.existsSync(file); n++) file = path.join(dir, `${stem}-${n}.json`)
  return file
}

/** Writes the run's results and answers the file's path. */
export function writeResults(dir: string, results: BenchResults): string {
  fs.mkdirSync(dir, { recursive: true })
  const file = resultsPath(dir, results.date, results.commit)
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
  return file
}
