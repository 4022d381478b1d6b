/**
 * Instructions a send costs, counted by valgrind's callgrind: Tern's send in process (the send
 * floor's work: checks, transaction, group commit, the message's row and view; no network), for
 * two builds, run after run. An instruction count does not drift with the machine the way CPU time
 * does on a shared VM (there, runs of one build ranged over ±20 % within minutes), so it tells a
 * change of a few percent in the send's own work apart. What it does not show: system calls and
 * the kernel's side of them, cache misses, and the threads' share (the WAL checkpointer's passes
 * run on wall-clock time, which valgrind stretches), so it counts the main thread only.
 *
 *   node --import tsx bench/instructions.ts <other checkout> [--runs N] [--messages N]
 *
 * Both builds run from their own `dist/` (`npx tsc -p tsconfig.build.json` in each). Each run of a
 * build is two processes on a fresh data directory: one that makes WARM sends and one that makes
 * WARM + N; the difference of their counts, divided by N, is a send's. About 3 minutes a run of
 * one build with the default 20,000 messages. docs/performance.md ("Comparing two builds") says
 * how to read it.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { describeMachine, machineLine } from './lib/machine.js'
import { ROOT } from './lib/processes.js'
import { fmt } from './lib/scenario.js'
import { median } from './lib/stats.js'

const WARM = 5000

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { runs: { type: 'string', default: '2' }, messages: { type: 'string', default: '20000' } },
})
const runs = Number(values.runs)
const messages = Number(values.messages)
if (positionals.length !== 1 || !(runs >= 1) || !(messages >= 1)) {
  console.error('usage: node --import tsx bench/instructions.ts <other checkout> [--runs N] [--messages N]')
  process.exit(2)
}
const builds = [
  { name: 'this', root: ROOT },
  { name: 'other', root: path.resolve(positionals[0]) },
]

/** The main thread's instruction count of one driver process. */
async function count(root: string, measure: number): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tern-instructions-'))
  try {
    const out = path.join(dir, 'callgrind.out')
    const argv = ['--tool=callgrind', '--smc-check=all-non-file', '--separate-threads=yes', `--callgrind-out-file=${out}`, process.execPath, '--import', 'tsx', 'bench/lib/send-instructions.ts']
    const env = { ...process.env, TERN_ROOT: root, DATA_DIR: path.join(dir, 'data'), WARM: String(WARM), MEASURE: String(measure) }
    const child = spawn('valgrind', argv, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('exit', resolve))
    if (code !== 0) throw new Error(`the driver failed under valgrind (exit ${code}):\n${stderr.slice(-2000)}`)
    // thread 1 is the main thread
    const main = fs.readFileSync(`${out}-01`, 'utf8').match(/^(?:summary|totals): (\d+)/m)
    if (!main) throw new Error('no total in the callgrind output')
    return Number(main[1])
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

console.log(machineLine(describeMachine()))
console.log(`Tern's send in process, main thread, ${fmt(messages)} messages counted after ${fmt(WARM)}, ${runs} runs a build`)
const results = new Map<string, number[]>(builds.map((build) => [build.name, []]))
for (let run = 1; run <= runs; run++) {
  for (const build of run % 2 === 1 ? builds : [...builds].reverse()) {
    const perMessage = ((await count(build.root, messages)) - (await count(build.root, 0))) / messages
    results.get(build.name)!.push(perMessage)
    console.log(`run ${run}, ${build.name}: ${fmt(perMessage)} instructions a send`)
  }
}
for (const build of builds) console.log(`median, ${build.name} (${build.root}): ${fmt(median(results.get(build.name)!))} instructions a send`)
