/**
 * The floor under a send benchmark: Tern's send without the network (bench/servers/send-alone.ts),
 * on a stopped Tern server's data directory, on the server's core, with `window` sends in flight
 * per personal chat (as the load kept them, so that they share commits as they did there).
 */
import type { Machine } from './machine.js'
import { SERVER_CORE, spawnNode } from './processes.js'
import { NODE_FLAGS } from './server.js'

export interface SendAlone {
  messages: number
  /** sends answered per second of the window */
  rate: number
  /** the process's CPU time (every thread) per send, µs */
  cpuUsPerMessage: number
  /** the share of its core the process used in the window */
  cpuShare: number
}

export async function sendAlone(
  machine: Machine,
  dataDir: string,
  window: number,
  warmupMs: number,
  durationMs: number,
): Promise<SendAlone> {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    WINDOW: String(window),
    WARMUP_MS: String(warmupMs),
    DURATION_MS: String(durationMs),
  }
  const child = spawnNode(machine, SERVER_CORE, [...NODE_FLAGS, '--import', 'tsx', 'bench/servers/send-alone.ts'], env, [
    'ignore',
    'pipe',
    'inherit',
  ])
  let out = ''
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  if (code !== 0) throw new Error(`send-alone exited with code ${code}`)
  return JSON.parse(out.trim().split('\n').pop()!) as SendAlone
}
