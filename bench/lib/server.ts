/**
 * The server under test, on core 0 with its own data directory: Tern (the compiled `dist/`, as
 * `npm start` runs it) or one of the bare baselines in bench/servers/. Output goes to
 * `<dataDir>/server.log`, shown when the server fails.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { ChildProcess } from 'node:child_process'
import type { Machine } from './machine.js'
import { freePort, ROOT, rssBytes, sleep, SERVER_CORE, spawnNode, stopChild } from './processes.js'

export type ServerKind =
  | 'tern'
  | 'bare-insert'
  | 'bare-insert-flags'
  | 'bare-ws'
  | 'bare-pg-insert'
  | 'bare-noop'
  | 'bare-relay'
  | 'bare-relay-none'

/**
 * `npm start`'s Node flags (package.json), for Tern and the baselines that share its runtime
 * settings (bare-ws, bare-insert-flags): Tern runs as users run it. The plain ceilings
 * (bare-insert, bare-pg-insert) run with Node's defaults. BENCH_NODE_FLAGS adds flags after them
 * (to compare runtime settings: a later flag overrides an earlier one).
 */
const START = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(
  /\s+/,
)
const EXTRA = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean)
export const NODE_FLAGS = [...START.filter((word) => word.startsWith('--')), ...EXTRA]

const ENTRY: Record<ServerKind, string[]> = {
  tern: [...NODE_FLAGS, 'dist/src/main.js'],
  // send-throughput's ceiling, plain: Node's default flags (as a Fastify app is usually run);
  // tsx only compiles it at start (measured on a busy machine: CPU per request within 2 % of the
  // esbuild-compiled file's under plain node)
  'bare-insert': ['--import', 'tsx', 'bench/servers/bare-insert.ts'],
  // the same route with npm start's flags (and BENCH_NODE_FLAGS): the ceiling the bench once used
  'bare-insert-flags': [...NODE_FLAGS, '--import', 'tsx', 'bench/servers/bare-insert.ts'],
  'bare-ws': [...NODE_FLAGS, '--import', 'tsx', 'bench/servers/bare-ws.ts'],
  // the plain PostgreSQL ceiling (send-pg): Node's default flags, neither npm start's nor BENCH_NODE_FLAGS
  'bare-pg-insert': ['--import', 'tsx', 'bench/servers/bare-pg-insert.ts'],
  // send-pg's bound: the same route without a database, Node's default flags
  'bare-noop': ['--import', 'tsx', 'bench/servers/bare-noop.ts'],
  // socket-sends' ceiling (a ws relay with one insert per message, group-committed) and the same
  // relay storing nothing: Node's default flags, like the plain ceilings
  'bare-relay': ['--import', 'tsx', 'bench/servers/bare-relay.ts'],
  'bare-relay-none': ['--import', 'tsx', 'bench/servers/bare-relay.ts', '--no-store'],
}

export interface Server {
  kind: ServerKind
  port: number
  url: string
  pid: number
  dataDir: string
  rss(): number
  stop(): Promise<void>
}

/** Tern's log level in benchmarks: its default (`info`, one line per request) unless BENCH_LOG_LEVEL says otherwise. */
export const TERN_LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'info'

function logTail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-30).join('\n')
  } catch {
    return '(no output)'
  }
}

export interface ServerOptions {
  /** a command the server runs under (`valgrind …`), before `node` */
  wrapper?: string[]
  /** how long to wait for /health (default 20 s) */
  startTimeoutMs?: number
  /** more environment (Tern's configuration) */
  env?: Record<string, string>
  /** Tern only: the checkout whose dist/ runs (default: this one), to compare two builds (bench/compare.ts) */
  root?: string
}

export async function startServer(machine: Machine, kind: ServerKind, dataDir: string, options: ServerOptions = {}): Promise<Server> {
  const port = await freePort()
  const logFile = path.join(dataDir, 'server.log')
  const out = fs.openSync(logFile, 'a')
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: TERN_LOG_LEVEL,
    // the in-process video service on a free port: several servers may run at once
    VIDEO_PORT: '0',
    // Set-up registers many users from one address; the default 5/300 would refuse them.
    REGISTER_RATE_LIMIT: '1000000/300',
    LOGIN_RATE_LIMIT: '1000000/60',
    WRITE_RATE_LIMIT_IP: '1000000000/60',
    WRITE_RATE_LIMIT_USER: '1000000000/60',
    WS_FRAME_RATE_LIMIT: '1000000/1',
    ...options.env,
  }
  // BENCH_CPU_PROF=<dir>: Tern writes a V8 CPU profile there when it stops (open it in Chrome DevTools).
  const profile =
    kind === 'tern' && process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : []
  const child: ChildProcess = spawnNode(
    machine,
    SERVER_CORE,
    [...profile, ...ENTRY[kind]],
    env,
    ['ignore', out, out],
    options.wrapper,
    kind === 'tern' ? options.root : undefined,
  )
  fs.closeSync(out)
  const url = `http://127.0.0.1:${port}`
  const startTimeoutMs = options.startTimeoutMs ?? 20_000
  const deadline = Date.now() + startTimeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${kind} server exited early:\n${logTail(logFile)}`)
    try {
      if ((await fetch(`${url}/health`)).ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stopChild(child, 0)
      throw new Error(`${kind} server did not answer /health within ${startTimeoutMs / 1000} s:\n${logTail(logFile)}`)
    }
    await sleep(50)
  }
  return {
    kind,
    port,
    url,
    pid: child.pid!,
    dataDir,
    rss: () => rssBytes(child.pid!),
    stop: async () => {
      await stopChild(child)
      if (child.exitCode !== 0 && child.signalCode === null) {
        process.stderr.write(`  (${kind} server exited with code ${child.exitCode}:\n${logTail(logFile)})\n`)
      }
    },
  }
}
