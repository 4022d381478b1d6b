/**
 * PostgreSQL on the server's core, for the scenarios whose target says "the same core shared with
 * Node": every local `postgres` process (the postmaster, its helpers, the backends that exist) is
 * moved onto the core the server under test is pinned to, for the scenario's duration, and put
 * back afterwards. Backends forked meanwhile inherit the postmaster's affinity, so they land on the
 * core too; when it is put back they get the postmaster's old affinity. Other sessions' backends
 * share the core meanwhile (the whole PostgreSQL server is pinned), which the scenario says.
 *
 * If the process dies before the scenario's `finally` (an uncaught error, Ctrl-C), an exit and a
 * signal handler put the affinities back so that PostgreSQL is not left on one core.
 */
import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { promisify } from 'node:util'
import type { Machine } from './machine.js'

const exec = promisify(execFile)
const TICK_MS = 1000 / 100 // USER_HZ

export interface PgPinning {
  /** every postgres process was moved onto the core */
  pinned: boolean
  /** one line for the scenario's log: what was pinned, or loudly why not */
  note: string
  /** Puts every affinity back; resolves with one line for the log (loud when something failed). */
  restore(): Promise<string>
}

/** Pids of the local processes named `postgres` (empty when PostgreSQL runs elsewhere). */
export function postgresPids(): number[] {
  try {
    return execFileSync('pgrep', ['-x', 'postgres'], { encoding: 'utf8' }).split(/\s+/).filter(Boolean).map(Number)
  } catch (error) {
    // pgrep exits 1 when nothing matches
    if ((error as { status?: number }).status === 1) return []
    throw error
  }
}

function parentOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return null
  }
}

const alive = (pid: number) => fs.existsSync(`/proc/${pid}`)

/** CPU time (ms, user + system) of every postgres process now, by pid. */
export function postgresCpuMs(): Map<number, number> {
  const cpu = new Map<number, number>()
  for (const pid of postgresPids()) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      cpu.set(pid, (Number(fields[11]) + Number(fields[12])) * TICK_MS)
    } catch {
      // ended meanwhile
    }
  }
  return cpu
}

/** CPU (ms) the postgres processes used between two readings; a process new in `after` counts from 0, one gone is lost. */
export function postgresCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, ms] of after) total += Math.max(0, ms - (before.get(pid) ?? 0))
  return total
}

async function maskOf(taskset: string, pid: number): Promise<string> {
  const { stdout } = await exec(taskset, ['-p', String(pid)])
  const match = /affinity mask:\s*([0-9a-fA-F,]+)/.exec(stdout)
  if (!match) throw new Error(`taskset -p ${pid} said: ${stdout.trim()}`)
  return match[1]
}

export async function pinPostgres(machine: Machine, core: number): Promise<PgPinning> {
  const unpinned = (why: string): PgPinning => ({
    pinned: false,
    note: `!!! PostgreSQL NOT PINNED to core ${core} (${why}): it floats over every core, so Node does not share its core with it as the target asks; the figures flatter both servers`,
    restore: async () => 'PostgreSQL was not pinned: nothing to put back',
  })
  if (!machine.taskset) return unpinned('taskset is not installed')
  const taskset = machine.taskset
  const pids = postgresPids()
  if (pids.length === 0) return unpinned('no local process named postgres: is BENCH_PG_URL on another machine?')
  // the postmaster first: backends forked from then on inherit the core
  const postmasters = pids.filter((pid) => !pids.includes(parentOf(pid) ?? -1))
  if (postmasters.length !== 1) return unpinned(`found ${postmasters.length} postmasters among ${pids.length} postgres processes`)
  const postmaster = postmasters[0]

  const previous = new Map<number, string>()
  const putBack = async (): Promise<string[]> => {
    const failures: string[] = []
    const fallback = previous.get(postmaster)
    // those forked meanwhile (ours, other sessions') had the postmaster's affinity before
    const everyone = new Map(previous)
    if (fallback) for (const pid of postgresPids()) if (!everyone.has(pid)) everyone.set(pid, fallback)
    for (const [pid, mask] of everyone) {
      try {
        await exec(taskset, ['-a', '-p', mask, String(pid)])
      } catch (error) {
        if (alive(pid)) failures.push(`pid ${pid}: ${String(error).split('\n')[0]}`)
      }
    }
    return failures
  }

  const pin = async (pid: number, old: string | null) => {
    try {
      previous.set(pid, old ?? (await maskOf(taskset, pid)))
      await exec(taskset, ['-a', '-p', '-c', String(core), String(pid)])
    } catch (error) {
      // a backend that ended meanwhile needs no pinning; anything else (permissions) stops it all
      if (pid !== postmaster && !alive(pid)) return previous.delete(pid)
      throw error
    }
  }

  const onExit = () => {
    for (const [pid, mask] of previous) {
      try {
        execFileSync(taskset, ['-a', '-p', mask, String(pid)], { stdio: 'ignore' })
      } catch {
        // gone, or not ours to change: nothing more to do while exiting
      }
    }
  }
  const onSignal = (signal: NodeJS.Signals) => {
    onExit()
    process.kill(process.pid, signal)
  }
  const release = () => {
    process.off('exit', onExit)
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
  process.on('exit', onExit)
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)

  try {
    await pin(postmaster, null)
    for (const pid of pids) if (pid !== postmaster) await pin(pid, null)
    // backends forked between pgrep and the postmaster's pinning had its old affinity
    for (const pid of postgresPids()) if (!previous.has(pid)) await pin(pid, previous.get(postmaster)!)
  } catch (error) {
    const failures = await putBack()
    release()
    return unpinned(
      `taskset failed: ${String(error).split('\n')[0]}${failures.length ? `; and putting back failed for ${failures.join(', ')}` : ''}`,
    )
  }
  return {
    pinned: true,
    note: `PostgreSQL pinned to core ${core} with the server under test: ${previous.size} postgres processes (postmaster ${postmaster}, previous affinity mask ${previous.get(postmaster)}); other sessions' queries share that core meanwhile`,
    restore: async () => {
      const failures = await putBack()
      release()
      return failures.length
        ? `!!! PostgreSQL's affinity could NOT be put back for ${failures.join(', ')}: check with taskset -p`
        : `PostgreSQL's processes are back on their previous affinity (postmaster: mask ${previous.get(postmaster)})`
    },
  }
}
