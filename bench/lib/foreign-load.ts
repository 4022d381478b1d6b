/**
 * How much CPU other processes (a test suite, a build) took while the bench ran: every figure
 * assumes the server has core 0 to itself. Samples /proc once a second and adds up the CPU time
 * of every process outside this one's process tree (processes that live under a second are missed).
 * On a virtual machine the hypervisor can also withhold CPU from a core ("steal" in /proc/stat):
 * that is reported per core, since it slows whatever is pinned there just the same.
 */
import fs from 'node:fs'
import os from 'node:os'

const TICKS_PER_SECOND = 100 // USER_HZ on Linux

interface Proc {
  ppid: number
  /** utime + stime, in ticks (not cutime: a reaped child was already counted on its own) */
  ticks: number
}

function readProcs(): Map<number, Proc> {
  const procs = new Map<number, Proc>()
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      // Fields after the parenthesised command name: state ppid … utime(11) stime(12).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      procs.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) })
    } catch {
      // the process ended while being read
    }
  }
  return procs
}

/** Per core: [steal, all] ticks so far, from the `cpuN` lines of /proc/stat. */
function readCores(): [number, number][] {
  const cores: [number, number][] = []
  try {
    for (const line of fs.readFileSync('/proc/stat', 'utf8').split('\n')) {
      const match = /^cpu(\d+) (.*)$/.exec(line)
      if (!match) continue
      // user nice system idle iowait irq softirq steal (guest time is already inside user)
      const ticks = match[2].trim().split(/\s+/).slice(0, 8).map(Number)
      cores[Number(match[1])] = [ticks[7] ?? 0, ticks.reduce((a, b) => a + b, 0)]
    }
  } catch {
    // not Linux: no steal figures
  }
  return cores
}

function isOurs(pid: number, procs: Map<number, Proc>): boolean {
  for (let current = pid, hops = 0; current > 1 && hops < 64; hops++) {
    if (current === process.pid) return true
    current = procs.get(current)?.ppid ?? 0
  }
  return false
}

export class ForeignLoad {
  private seen = new Map<number, number>()
  private foreignTicks = 0
  private readonly started = performance.now()
  private readonly cores = readCores()
  private readonly timer: NodeJS.Timeout

  constructor() {
    this.sample(true)
    this.timer = setInterval(() => this.sample(false), 1000)
    this.timer.unref()
  }

  private sample(first: boolean) {
    const procs = readProcs()
    for (const [pid, proc] of procs) {
      if (isOurs(pid, procs)) continue
      // A process first seen now counts from zero, except in the very first sample.
      const before = this.seen.get(pid) ?? (first ? proc.ticks : 0)
      this.foreignTicks += Math.max(0, proc.ticks - before)
      this.seen.set(pid, proc.ticks)
    }
    for (const pid of this.seen.keys()) if (!procs.has(pid)) this.seen.delete(pid)
  }

  /** Average share of the machine's cores that other processes used so far (0–1). */
  share(): number {
    this.sample(false)
    const seconds = (performance.now() - this.started) / 1000
    return this.foreignTicks / TICKS_PER_SECOND / seconds / os.availableParallelism()
  }

  /** Per core, the share of its time the hypervisor withheld so far (0–1); empty where unknown. */
  steal(): number[] {
    return readCores().map(([steal, all], core) => {
      const [steal0, all0] = this.cores[core] ?? [0, 0]
      return all > all0 ? (steal - steal0) / (all - all0) : 0
    })
  }

  stop() {
    clearInterval(this.timer)
  }
}
