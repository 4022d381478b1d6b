/**
 * Child processes of a benchmark: servers pinned to core 0, load generators pinned to core 1
 * (through taskset when it is installed). Every child is killed by its pid if the run dies.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { Machine } from './machine.js'

export const ROOT = path.resolve(import.meta.dirname, '../..')

export const SERVER_CORE = 0
export const LOAD_CORE = 1

const children = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/** Starts `node <args>` on one core (or unpinned without taskset), under `wrapper` if given (valgrind…). */
export function spawnNode(
  machine: Machine,
  core: number,
  args: string[],
  env: NodeJS.ProcessEnv,
  stdio: StdioOptions,
  wrapper: string[] = [],
  cwd = ROOT,
): ChildProcess {
  return spawnPinned(machine, core, [...wrapper, process.execPath, ...args], env, stdio, cwd)
}

/** Starts any command on one core (or unpinned without taskset), in `cwd`; killed with the run like spawnNode's. */
export function spawnPinned(
  machine: Machine,
  core: number,
  argv: string[],
  env: NodeJS.ProcessEnv,
  stdio: StdioOptions,
  cwd = ROOT,
): ChildProcess {
  const command = [...(machine.taskset ? [machine.taskset, '-c', String(core)] : []), ...argv]
  const child = spawn(command[0], command.slice(1), { cwd, env, stdio })
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}

/** Ends a child: SIGTERM, then SIGKILL if it is still there after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

export async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A fresh temporary data directory, removed by `removeDataDir`. */
export function makeDataDir(name: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `tern-bench-${name}-`))
}

/** BENCH_KEEP_DATA=1 keeps the data directories (server.log, callgrind dumps) and says where. */
export function removeDataDir(dir: string) {
  if (process.env.BENCH_KEEP_DATA) return void process.stderr.write(`  (kept ${dir})\n`)
  fs.rmSync(dir, { recursive: true, force: true })
}

/** Resident set size of a process, from /proc (Linux). */
export function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status)
  if (!match) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(match[1]) * 1024
}

/** CPU time (ms, user + system) of each thread of a process, by thread id; empty where /proc is missing. */
export function threadCpuMs(pid: number): Map<number, number> {
  const cpu = new Map<number, number>()
  const tick = 1000 / 100 // USER_HZ
  let tids: string[] = []
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`)
  } catch {
    return cpu
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      cpu.set(Number(tid), (Number(fields[11]) + Number(fields[12])) * tick)
    } catch {
      // the thread ended
    }
  }
  return cpu
}

/** Which threads used CPU between two threadCpuMs readings: "main 6,540 ms, 4 others 410 ms (biggest 300)". */
export function threadCpuLine(pid: number, before: Map<number, number>, after: Map<number, number>): string {
  const used = [...after].map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)] as const).filter(([, ms]) => ms > 0)
  const main = used.find(([tid]) => tid === pid)?.[1] ?? 0
  const others = used.filter(([tid]) => tid !== pid).sort((a, b) => b[1] - a[1])
  const total = others.reduce((sum, [, ms]) => sum + ms, 0)
  return `main thread ${main} ms, ${others.length} other threads ${total} ms${others.length ? ` (biggest ${others[0][1]})` : ''}`
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
