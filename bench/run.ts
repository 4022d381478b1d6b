/**
 * `npm run bench [scenario…]`: runs the named scenarios (all by default), each against its own
 * server and data directory, and prints one table: the median of BENCH_RUNS runs per figure, with
 * min, max, target and verdict, and the machine it ran on. Progress goes to stderr. The same
 * figures are written as data to bench/results/<YYYY-MM-DD>-<short commit>.json (bench/lib/results.ts).
 *
 *   BENCH_RUNS=3        measured runs per figure
 *   BENCH_DURATION=8    seconds per measured load window
 *   BENCH_WARMUP=2      seconds of warm-up before each window
 *   BENCH_LOG_LEVEL     Tern's LOG_LEVEL (default: its own default, info)
 *   BENCH_CPU_PROF=dir  write a V8 CPU profile of each Tern server into dir
 */
import fs from 'node:fs'
import path from 'node:path'
import { ForeignLoad } from './lib/foreign-load.js'
import { codeRevision, describeMachine, machineLine } from './lib/machine.js'
import { ROOT } from './lib/processes.js'
import { renderTable, type Row } from './lib/report.js'
import { resultFigure, writeResults } from './lib/results.js'
import type { BenchContext } from './lib/scenario.js'
import { NODE_FLAGS, TERN_LOG_LEVEL } from './lib/server.js'
import { scenarios } from './scenarios/index.js'

function positive(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!(value > 0)) throw new Error(`${name} must be a positive number (got ${JSON.stringify(raw)})`)
  return value
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`

function usage(): string {
  return ['usage: npm run bench [-- scenario…]', ...scenarios.map((s) => `  ${s.name.padEnd(16)} ${s.summary}`)].join('\n')
}

async function main() {
  const names = process.argv.slice(2)
  if (names.includes('--help') || names.includes('-h')) return console.log(usage())
  const unknown = names.filter((name) => !scenarios.some((s) => s.name === name))
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}\n${usage()}`)
  const chosen = names.length ? scenarios.filter((s) => names.includes(s.name)) : scenarios
  if (!fs.existsSync(path.join(ROOT, 'dist/src/main.js'))) throw new Error('dist/ is missing: run `npm run build` (npm run bench does)')

  const startedAt = new Date()
  const machine = describeMachine()
  const revision = codeRevision(ROOT)
  const ctx: BenchContext = {
    machine,
    runs: Math.round(positive('BENCH_RUNS', 3)),
    durationMs: positive('BENCH_DURATION', 8) * 1000,
    warmupMs: positive('BENCH_WARMUP', 2) * 1000,
    log: (line) => process.stderr.write(`${line}\n`),
  }
  ctx.log(machineLine(machine))
  if (machine.cores < 2) ctx.log('warning: fewer than 2 cores: server and load generator compete for one')
  const foreign = new ForeignLoad()

  const rows: Row[] = []
  const failed: string[] = []
  const ran: string[] = []
  for (const scenario of chosen) {
    ran.push(scenario.name)
    const started = Date.now()
    const others = new ForeignLoad()
    ctx.log(`\n${scenario.name}: ${scenario.summary}`)
    try {
      rows.push(...(await scenario.run(ctx)))
      ctx.log(
        `  done in ${Math.round((Date.now() - started) / 1000)} s; other processes used ${percent(others.share())} of the CPU meanwhile${stealNote(others.steal())}`,
      )
    } catch (error) {
      failed.push(scenario.name)
      ctx.log(`  FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    } finally {
      others.stop()
    }
  }

  console.log(`\n${machineLine(machine)}`)
  console.log(`code: ${revision ?? 'unknown revision'} (as built into dist/ before the run)`)
  console.log(
    `runs: ${ctx.runs} per figure (median, min, max); load windows ${ctx.durationMs / 1000} s after ${ctx.warmupMs / 1000} s warm-up; Tern LOG_LEVEL=${TERN_LOG_LEVEL}; Node flags (npm start's and BENCH_NODE_FLAGS; Tern and every baseline but the plain ceilings bare-insert and bare-pg-insert, which run with Node's defaults): ${NODE_FLAGS.join(' ') || 'none'}`,
  )
  const foreignShare = foreign.share()
  const steal = foreign.steal()
  foreign.stop()
  // Anything else running (a test suite, a build) takes CPU from the pinned server and skews every figure.
  const busy = foreignShare > 0.05 || Math.max(0, ...steal) > 0.05 ? ': figures are low and noisy, run again on a quiet machine' : ''
  console.log(`other processes used ${percent(foreignShare)} of the machine's CPU during the run${stealNote(steal)}${busy}\n`)
  if (rows.length) console.log(renderTable(rows))
  const file = writeResults(path.join(ROOT, 'bench/results'), {
    date: startedAt.toISOString().slice(0, 10),
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    commit: revision?.split(' ')[0] ?? null,
    code: revision,
    machine,
    settings: {
      runs: ctx.runs,
      durationSeconds: ctx.durationMs / 1000,
      warmupSeconds: ctx.warmupMs / 1000,
      ternLogLevel: TERN_LOG_LEVEL,
      nodeFlags: NODE_FLAGS,
    },
    otherProcessesShare: foreignShare,
    steal,
    scenarios: { ran, failed },
    figures: rows.map(resultFigure),
  })
  console.log(`\nresults written to ${path.relative(process.cwd(), file)}`)
  if (failed.length) {
    console.log(`\nfailed scenarios: ${failed.join(', ')} (see above)`)
    process.exitCode = 1
  }
}

/** The hypervisor's share of each core's time (steal), when it took any. */
function stealNote(steal: number[]): string {
  if (!steal.some((share) => share >= 0.001)) return ''
  return `; the hypervisor withheld ${steal.map((share, core) => `${percent(share)} of core ${core}`).join(' and ')} (steal)`
}

main().catch((error) => {
  console.error(`bench: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
