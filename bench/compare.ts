/**
 * Two builds of Tern on socket-sends' load (100 sender → receiver pairs over the WebSocket, the
 * load of bench/load/socket-sends.ts), alternating run by run so that drift on the machine hits
 * both alike: whether a change to the send path saves anything. docs/performance.md ("Comparing
 * two builds") says how to read it.
 *
 *   node --import tsx bench/compare.ts <other checkout> [--rate N | --window N] [--runs N] [--seconds N]
 *
 * "this" is the checkout the tool is in, "other" another one (a `git worktree` of the commit to
 * compare with). Each runs from its own `dist/`: build both first (`npx tsc -p tsconfig.build.json`).
 * Every run starts a fresh server on a fresh data directory. Without --rate the load is a closed
 * loop with --window messages in flight per pair (default 4, the bench's maximum); with --rate it
 * is an open loop at that many messages a second.
 *
 * Per run: messages a second, the server's CPU per message (all threads, from /proc) and the share
 * of its core, the main thread's and the other threads' CPU per message, and send → receipt p50
 * and p99. A window where the server used 95 % of its core or more is marked saturated: at a fixed
 * rate the CPU per message is then the core divided by the rate, whatever the build, and only the
 * latency compares.
 */
import path from 'node:path'
import { parseArgs } from 'node:util'
import { openPairs } from './lib/api.js'
import { runLoad } from './lib/load.js'
import { describeMachine, machineLine } from './lib/machine.js'
import { SATURATED, type PairLoadResult } from './lib/pair-load.js'
import { makeDataDir, removeDataDir, ROOT, threadCpuMs } from './lib/processes.js'
import { fmt } from './lib/scenario.js'
import { startServer } from './lib/server.js'
import { median } from './lib/stats.js'
import type { SocketSendsSpec } from './load/socket-sends.js'

const PAIRS = 100

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rate: { type: 'string' },
    window: { type: 'string', default: '4' },
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '6' },
  },
})
const [otherRoot] = positionals
const rate = values.rate === undefined ? null : Number(values.rate)
const window = Number(values.window)
const runs = Number(values.runs)
const durationMs = Number(values.seconds) * 1000
if (positionals.length !== 1 || (rate !== null && !(rate > 0)) || !(window >= 1) || !(runs >= 1) || !(durationMs > 0)) {
  console.error('usage: node --import tsx bench/compare.ts <other checkout> [--rate N | --window N] [--runs N] [--seconds N]')
  process.exit(2)
}

interface Run {
  rate: number
  cpuUs: number
  share: number
  mainUs: number
  othersUs: number
  p50: number
  p99: number
}

const machine = describeMachine()
const builds = [
  { name: 'this', root: ROOT },
  { name: 'other', root: path.resolve(otherRoot) },
]

/** One run of one build: a fresh server and data directory, the pairs registered, one load window. */
async function measure(root: string): Promise<Run> {
  const dataDir = makeDataDir('compare')
  const server = await startServer(machine, 'tern', dataDir, { root })
  try {
    const pairs = await openPairs(server.url, 'cmp', PAIRS)
    const shape = rate === null ? ({ mode: 'closed', window } as const) : ({ mode: 'open', rate } as const)
    const before = threadCpuMs(server.pid)
    const result = await runLoad<PairLoadResult>(machine, 'socket-sends', {
      port: server.port,
      pairs,
      warmupMs: 2000,
      durationMs,
      serverPid: server.pid,
      ...shape,
    } satisfies SocketSendsSpec)
    const after = threadCpuMs(server.pid)
    if (result.missing > 0 || result.unacked > 0)
      throw new Error(`${result.missing} messages not delivered, ${result.unacked} not acknowledged`)
    // the threads' split over the whole load (warm-up included), applied to the window's CPU per message
    let main = 0
    let others = 0
    for (const [tid, ms] of after) {
      const used = ms - (before.get(tid) ?? 0)
      if (tid === server.pid) main += used
      else others += used
    }
    const cpuUs = result.serverCpuPerMessageUs ?? Number.NaN
    return {
      rate: result.throughput,
      cpuUs,
      share: result.serverCpu ?? Number.NaN,
      mainUs: (cpuUs * main) / (main + others),
      othersUs: (cpuUs * others) / (main + others),
      p50: result.latency.p50,
      p99: result.latency.p99,
    }
  } finally {
    await server.stop()
    removeDataDir(dataDir)
  }
}

const line = (run: Run) =>
  `${fmt(run.rate)} msg/s, ${fmt(run.cpuUs, 1)} µs of CPU per message (main thread ${fmt(run.mainUs, 1)}, others ${fmt(run.othersUs, 1)}), ` +
  `${Math.round(run.share * 100)} % of its core${rate !== null && run.share >= SATURATED ? ' (saturated)' : ''}, p50 ${fmt(run.p50, 2)} ms, p99 ${fmt(run.p99, 2)} ms`

console.log(machineLine(machine))
console.log(
  `load: ${rate === null ? `closed loop, ${window} in flight per pair` : `open loop, ${fmt(rate)} msg/s`}, ${PAIRS} pairs, ${runs} runs of ${durationMs / 1000} s each`,
)
const results = new Map<string, Run[]>(builds.map((build) => [build.name, []]))
for (let run = 1; run <= runs; run++) {
  // each round starts with the build the last one ended with, so neither always goes first
  for (const build of run % 2 === 1 ? builds : [...builds].reverse()) {
    const result = await measure(build.root)
    results.get(build.name)!.push(result)
    console.log(`run ${run}, ${build.name}: ${line(result)}`)
  }
}
for (const build of builds) {
  const all = results.get(build.name)!
  const med = (pick: (run: Run) => number) => median(all.map(pick))
  console.log(
    `median, ${build.name} (${build.root}): ${line({ rate: med((r) => r.rate), cpuUs: med((r) => r.cpuUs), share: med((r) => r.share), mainUs: med((r) => r.mainUs), othersUs: med((r) => r.othersUs), p50: med((r) => r.p50), p99: med((r) => r.p99) })}`,
  )
}
