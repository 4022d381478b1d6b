/** What the numbers were measured on, and whether processes can be pinned to cores. */
import { execFileSync } from 'node:child_process'
import os from 'node:os'

export interface Machine {
  cores: number
  cpuModel: string
  node: string
  /** path of taskset, or null when it is not installed (processes then float between cores) */
  taskset: string | null
}

function which(command: string): string | null {
  try {
    return execFileSync('which', [command], { encoding: 'utf8' }).trim() || null
  } catch {
    return null
  }
}

export function describeMachine(): Machine {
  return {
    cores: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown CPU',
    node: process.version,
    taskset: which('taskset'),
  }
}

/** The commit measured, and whether src/ differed from it (read-only git; null outside a checkout). */
export function codeRevision(root: string): string | null {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const dirty = git('status', '--porcelain', '--', 'src') !== ''
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' with uncommitted changes in src/' : ''}`
  } catch {
    return null
  }
}

export function machineLine(machine: Machine): string {
  const pinning = machine.taskset
    ? 'server pinned to core 0, load to core 1 (taskset)'
    : 'NOT pinned: taskset is not installed, server and load share the cores'
  return `machine: ${machine.cores} cores (${machine.cpuModel}), Node ${machine.node}, dialect sqlite; ${pinning}`
}
