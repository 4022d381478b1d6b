/**
 * Instructions a send costs, counted by valgrind's callgrind, for two builds, run after run:
 *  - `--path send` (the default): Tern's send in process (the send floor's work: checks,
 *    transaction, group commit, the message's row and view; no network);
 *  - `--path socket`: the whole server's main thread on socket-sends' maximum load (100 pairs, 4
 *    in flight each: frames read and parsed, the send, its events, the ack and the peer's
 *    message.new written), by bench/lib/server-instructions.ts;
 *  - `--path http`: the same for `POST V2/messages/send` (32 keep-alive connections).
 * An instruction count does not drift with the machine the way CPU time
 * does on a shared VM (there, runs of one build ranged over ±20 % within minutes), so it tells a
 * change of a few percent in the send's own work apart. What it does not show: system calls and
 * the kernel's side of them, cache misses, and the threads' share (the WAL checkpointer's passes
 * run on wall-clock time, which valgrind stretches), so it counts the main thread only.
 *
 *   node --import tsx bench/instructions.ts <other checkout> [--path send|socket|http] [--runs N] [--messages N]
 *
 * Both builds run from their own `dist/` (`npx tsc -p tsconfig.build.json` in each). With
 * `--path send`, each run of a build is two processes on a fresh data directory: one that makes
 * WARM sends and one that makes WARM + N; the difference of their counts, divided by N, is a
 * send's (about 3 minutes a run of one build with the default 20,000 messages). The server paths
 * count N messages after WARM uncounted ones in one server process, switching callgrind on between
 * them. docs/performance.md ("Comparing two builds") says
 * how to read it.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { describeMachine, machineLine } from './lib/machine.js'
import { ROOT } from './lib/processes.js'
import { countInstructions } from './lib/server-instructions.js'
import { fmt } from './lib/scenario.js'
import { median } from './lib/stats.js'

const WARM = 5000

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { path: { type: 'string', default: 'send' }, runs: { type: 'string', default: '2' }, messages: { type: 'string' } },
})
const sendPath = values.path

const runs = Number(values.runs)
const messages = Number(values.messages ?? (sendPath === 'send' ? 20_000 : 10_000))
if (positionals.length !== 1 || !(runs >= 1) || !(messages >= 1) || !['send', 'socket', 'http'].includes(sendPath!)) {
  console.error('usage: node --import tsx bench/instructions.ts <other checkout> [--path send|socket|http] [--runs N] [--messages N]')
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
    const argv = [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      '--separate-threads=yes',
      `--callgrind-out-file=${out}`,
      process.execPath,
      '--import',
      'tsx',
      'bench/lib/send-instructions.ts',
    ]
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

/** A message's instructions on one build's main thread, by the chosen path. */
async function perMessage(root: string): Promise<number> {
  if (sendPath === 'send') return ((await count(root, messages)) - (await count(root, 0))) / messages
  const shape = sendPath === 'socket' ? { pairs: 100, window: 4 } : { inFlight: 32 }
  return (
    await countInstructions(machine, {
      kind: 'tern',
      target: sendPath as 'socket' | 'http',
      root,
      warmUp: WARM,
      measured: messages,
      ...shape,
    })
  ).main
}

const machine = describeMachine()
console.log(machineLine(machine))
const what = {
  send: "Tern's send in process",
  socket: 'socket sends (100 pairs, 4 in flight each), the server',
  http: 'POST V2/messages/send (32 connections), the server',
}[sendPath as 'send']
console.log(`${what}, main thread, ${fmt(messages)} messages counted after ${fmt(WARM)}, ${runs} runs a build`)
const results = new Map<string, number[]>(builds.map((build) => [build.name, []]))
for (let run = 1; run <= runs; run++) {
  for (const build of run % 2 === 1 ? builds : [...builds].reverse()) {
    const counted = await perMessage(build.root)
    results.get(build.name)!.push(counted)
    console.log(`run ${run}, ${build.name}: ${fmt(counted)} instructions a send`)
  }
}
for (const build of builds)
  console.log(`median, ${build.name} (${build.root}): ${fmt(median(results.get(build.name)!))} instructions a send`)
