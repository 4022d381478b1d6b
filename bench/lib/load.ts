/**
 * Load generators run in their own process on core 1 (bench/load/*.ts), driven over Node's IPC
 * channel: each request message gets exactly one reply, `{ ok, result }` or `{ ok: false, error }`.
 */
import type { ChildProcess } from 'node:child_process'
import type { Machine } from './machine.js'
import { LOAD_CORE, spawnNode, stopChild } from './processes.js'

type Reply = { ok: true; result: unknown } | { ok: false; error: string }

export class LoadProcess {
  private replies: ((reply: Reply) => void)[] = []

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (reply: Reply) => this.replies.shift()?.(reply))
    child.once('exit', (code, signal) => {
      for (const wake of this.replies.splice(0)) wake({ ok: false, error: `load process exited (${signal ?? code})` })
    })
  }

  /** Starts bench/load/<script>.ts on the load core. */
  static start(machine: Machine, script: string): LoadProcess {
    const child = spawnNode(machine, LOAD_CORE, ['--import', 'tsx', `bench/load/${script}.ts`], process.env, [
      'ignore',
      'inherit',
      'inherit',
      'ipc',
    ])
    return new LoadProcess(child)
  }

  request<T>(message: unknown): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.replies.push((reply) => (reply.ok ? resolve(reply.result as T) : reject(new Error(reply.error))))
      this.child.send(message as object)
    })
  }

  /** Disconnects; the load process closes its sockets and exits. */
  async close(): Promise<void> {
    if (this.child.connected) this.child.disconnect()
    await stopChild(this.child, 5_000)
  }
}

/** One request to a fresh load process, which then exits. */
export async function runLoad<T>(machine: Machine, script: string, spec: unknown): Promise<T> {
  const load = LoadProcess.start(machine, script)
  try {
    return await load.request<T>(spec)
  } finally {
    await load.close()
  }
}
