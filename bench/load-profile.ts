/**
 * Where Tern's server spends a message under socket-sends' load, at its maximum or at a fixed
 * rate, seen by Linux perf: the kernel's side of the system calls and every thread included,
 * which callgrind (bench/instructions.ts) and V8's profiler (BENCH_CPU_PROF) leave out. For each
 * load shape it prints:
 *   - the rate, the server's CPU per message and share of its core (as the bench reads them);
 *   - system calls per message, by thread (perf stat's syscall tracepoints);
 *   - with --record, a sampled profile (V8's JIT code named through Node's --perf-basic-prof map):
 *     µs a message by thread, the main thread's time inside each system call, and the functions
 *     the main thread spent most of its time under (inclusive: a function's callees count too).
 *
 *   node --import tsx bench/load-profile.ts w4 r8000 r1000 [--record] [--seconds 4] [--top 25]
 *
 * The syscall count and the profile take a window each (`--seconds`), one after the other, inside
 * one load run (the tracepoints would otherwise add their own cost to the profile); the rate and
 * CPU figures are the whole run's.
 *
 * A shape is `w<N>` (closed loop, N messages in flight per pair; socket-sends' maximum is w4) or
 * `r<N>` (open loop, N messages a second over the 100 pairs). The shapes run one after another on
 * one server, as listed. Tern runs from this checkout's dist/ (build it first). Needs `perf`
 * (Debian's linux-perf) and the right to trace another process (root, as here).
 */
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { openPairs } from './lib/api.js'
import { runLoad } from './lib/load.js'
import { describeMachine, machineLine } from './lib/machine.js'
import type { PairLoadResult } from './lib/pair-load.js'
import { makeDataDir, removeDataDir } from './lib/processes.js'
import { fmt } from './lib/scenario.js'
import type { SocketSendsSpec } from './load/socket-sends.js'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    record: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '4' },
    top: { type: 'string', default: '25' },
  },
})
const seconds = Number(values.seconds)
const top = Number(values.top)
if (!(seconds > 0) || !(top > 0)) throw new Error('--seconds and --top must be positive numbers')
const shapes = positionals.map((arg) => {
  const match = /^([wr])([1-9]\d*)$/.exec(arg)
  if (!match) throw new Error(`a load shape is w<messages in flight per pair> or r<messages a second>, not ${arg}`)
  const n = Number(match[2])
  return { label: arg, shape: match[1] === 'w' ? ({ mode: 'closed', window: n } as const) : ({ mode: 'open', rate: n } as const) }
})
if (shapes.length === 0) throw new Error('name at least one load shape: w4 (the maximum), r8000 (a fixed rate), …')

/** perf's sampling frequency (Hz) for --record: a sample stands for 1e6 / FREQUENCY µs of a thread's CPU */
const FREQUENCY = 2000
const SYSCALLS = ['read', 'write', 'writev', 'pread64', 'pwrite64', 'fsync', 'fdatasync', 'fcntl', 'epoll_pwait', 'futex']
const PAIRS = 100

// the map that names JIT code: set before server.js reads BENCH_NODE_FLAGS
if (values.record) process.env.BENCH_NODE_FLAGS = `${process.env.BENCH_NODE_FLAGS ?? ''} --perf-basic-prof`
const { startServer } = await import('./lib/server.js')

/** Runs `perf` with `args` to its end; its stderr (where perf stat writes) is returned. */
function perf(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('perf', args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
    child.on('error', reject)
    child.on('exit', (code) =>
      code === 0 ? resolve(stderr) : reject(new Error(`perf ${args[0]} exited with ${code}: ${stderr.slice(-500)}`)),
    )
  })
}

/** perf stat -x, --per-thread lines → count per message, by syscall then thread. */
function syscallTable(output: string, messages: number, mainTid: number): string[] {
  const counts = new Map<string, Map<string, number>>()
  for (const line of output.split('\n')) {
    const [thread, count, , event] = line.split(',')
    const name = event?.replace('syscalls:sys_enter_', '')
    if (!name || !(Number(count) > 0)) continue
    const tid = Number(/(\d+)\s*$/.exec(thread)?.[1])
    const who = tid === mainTid ? 'main' : `thread ${tid}`
    const row = counts.get(name) ?? new Map<string, number>()
    counts.set(name, row.set(who, (row.get(who) ?? 0) + Number(count)))
  }
  return [...counts].map(([name, row]) => {
    const cells = [...row].sort((a, b) => b[1] - a[1]).map(([who, count]) => `${who} ${fmt(count / messages, 3)}`)
    return `    ${name.padEnd(12)} ${cells.join(', ')}`
  })
}

/** A frame's name as perf script prints it, shortened: paths into this checkout and node_modules dropped. */
const shortName = (frame: string) =>
  frame
    .trim()
    .replace(/^[0-9a-f]+ /, '')
    .replace(/file:\/\/\/\S*?\/dist\/src\//, '')
    .replace(/\S*?\/node_modules\//, '')

/** What a thread other than the main one is, told by what it runs. */
function threadKind(symbols: Map<string, number>): string {
  const has = (pattern: RegExp) => [...symbols.keys()].some((name) => pattern.test(name))
  if (has(/walCheckpoint|sqlite3WalCheckpoint/)) return 'WAL checkpointer'
  if (has(/fts5/)) return 'search indexer'
  if (has(/Scaveng|Marking|Sweeper|Concurrent/)) return 'V8 helper'
  return 'other'
}

/** a kernel address, as perf script prints a frame (x86-64) */
const KERNEL_ADDRESS = /^\s*ffffffff[0-9a-f]{8} /

/** The profile of `data` (perf record's file), per message. */
function profileTable(data: string, messages: number, mainTid: number): string[] {
  const script = spawnText('perf', ['script', '-i', data, '-F', 'tid,ip,sym'])
  const usPerSample = 1e6 / FREQUENCY
  const perMessage = (samples: number) => fmt((samples * usPerSample) / messages, 1)
  const threads = new Map<number, { samples: number; symbols: Map<string, number> }>()
  const syscalls = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let mainSamples = 0
  let kernelSamples = 0
  for (const sample of script.split('\n\n')) {
    const lines = sample.split('\n').filter((line) => line.trim() !== '')
    if (lines.length < 2) continue
    const tid = Number(lines[0].trim())
    const frames = lines.slice(1).map(shortName)
    const thread = threads.get(tid) ?? { samples: 0, symbols: new Map() }
    threads.set(tid, thread)
    thread.samples++
    thread.symbols.set(frames[0], (thread.symbols.get(frames[0]) ?? 0) + 1)
    if (tid !== mainTid) continue
    mainSamples++
    // the system call the sample is in: the frame do_syscall_64 called (frames run from the leaf out)
    const entry = frames.lastIndexOf('do_syscall_64')
    let call = entry > 0 ? frames[entry - 1] : undefined
    if (call === 'x64_sys_call' && entry > 1) call = frames[entry - 2]
    if (call) {
      const name = call.replace(/^(__x64_sys_|__do_sys_|__se_sys_|ksys_)/, '')
      syscalls.set(name, (syscalls.get(name) ?? 0) + 1)
    }
    if (KERNEL_ADDRESS.test(lines[1])) kernelSamples++
    for (const name of new Set(frames.filter((frame) => frame.startsWith('JS:')))) inclusive.set(name, (inclusive.get(name) ?? 0) + 1)
  }
  const out: string[] = ['  µs a message, by thread (sampled):']
  for (const [tid, { samples, symbols }] of [...threads].sort((a, b) => b[1].samples - a[1].samples)) {
    if (samples * usPerSample < messages * 0.05) continue
    out.push(`    ${(tid === mainTid ? 'main' : `${threadKind(symbols)} (${tid})`).padEnd(28)} ${perMessage(samples)}`)
  }
  const inCalls = [...syscalls.values()].reduce((sum, n) => sum + n, 0)
  out.push(
    `  the main thread: ${perMessage(mainSamples)} µs a message, ${perMessage(kernelSamples)} of it in the kernel, ${perMessage(inCalls)} in system calls:`,
  )
  for (const [name, samples] of [...syscalls].sort((a, b) => b[1] - a[1]).slice(0, 8))
    out.push(`    ${name.padEnd(28)} ${perMessage(samples)}`)
  out.push(`  the main thread's time under each function (inclusive), µs a message:`)
  for (const [name, samples] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top))
    out.push(`    ${perMessage(samples).padStart(7)}  ${name.slice(0, 110)}`)
  return out
}

/** A command's output, through a file: perf script's runs to megabytes, more than a pipe's buffer holds. */
function spawnText(command: string, args: string[]): string {
  const out = path.join(os.tmpdir(), `load-profile-${process.pid}.txt`)
  const fd = fs.openSync(out, 'w')
  try {
    const { status } = spawnSync(command, args, { stdio: ['ignore', fd, 'ignore'] })
    if (status !== 0) throw new Error(`${command} ${args[0]} failed (${status})`)
    return fs.readFileSync(out, 'utf8')
  } finally {
    fs.closeSync(fd)
    fs.rmSync(out, { force: true })
  }
}

const machine = describeMachine()
console.log(machineLine(machine))
const dataDir = makeDataDir('load-profile')
const tern = await startServer(machine, 'tern', dataDir)
const record = path.join(os.tmpdir(), `load-profile-${process.pid}.data`)
try {
  const pairs = await openPairs(tern.url, 'sock', PAIRS)
  for (const { label, shape } of shapes) {
    const warmupMs = 2000
    const load = runLoad<PairLoadResult>(machine, 'socket-sends', {
      port: tern.port,
      pairs,
      warmupMs,
      durationMs: (values.record ? 2 : 1) * seconds * 1000 + 1000,
      serverPid: tern.pid,
      ...shape,
    } satisfies SocketSendsSpec)
    // awaited below; a failing perf must not leave its rejection unhandled meanwhile
    load.catch(() => {})
    // measured inside the load's own window: after its warm-up, ending before it does
    await new Promise((resolve) => setTimeout(resolve, warmupMs + 500))
    const events = SYSCALLS.map((name) => `syscalls:sys_enter_${name}`).join(',')
    // one after the other: the syscall tracepoints would add their own cost to the profile
    const stat = await perf(['stat', '-x', ',', '--per-thread', '-e', events, '-p', String(tern.pid), '--', 'sleep', String(seconds)])
    // perf record keeps an existing file as <file>.old: start each shape's without one
    fs.rmSync(record, { force: true })
    if (values.record)
      await perf([
        'record',
        '-q',
        '-e',
        'cpu-clock',
        '-F',
        String(FREQUENCY),
        '-g',
        '-p',
        String(tern.pid),
        '-o',
        record,
        '--',
        'sleep',
        String(seconds),
      ])
    const result = await load
    const messages = result.throughput * seconds
    console.log(
      `${label}: ${fmt(result.throughput)} msg/s, ${fmt(result.serverCpuPerMessageUs ?? Number.NaN, 1)} µs of CPU a message, ` +
        `${Math.round((result.serverCpu ?? Number.NaN) * 100)}% of its core; p50 ${fmt(result.latency.p50, 2)} ms, p99 ${fmt(result.latency.p99, 2)} ms`,
    )
    console.log('  system calls a message, by thread:')
    for (const line of syscallTable(stat, messages, tern.pid)) console.log(line)
    if (values.record) for (const line of profileTable(record, messages, tern.pid)) console.log(line)
  }
} finally {
  fs.rmSync(record, { force: true })
  await tern.stop()
  removeDataDir(dataDir)
}
