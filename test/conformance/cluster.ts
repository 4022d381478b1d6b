/**
 * The servers of a conformance run: Tern as real processes (harness/process.ts), one on SQLite or
 * two sharing one PostgreSQL database and one Redis, each killable with SIGKILL and restarted on
 * the same port, database and data directory.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { createTestDatabase, tempDir, type TestDatabase } from '../harness/database.js'
import { freePort } from '../harness/process.js'

const root = path.resolve(import.meta.dirname, '../..')

export interface TernProcess {
  child: ChildProcess
  output(): string
  exited: Promise<number | null>
}

/**
 * Starts src/main.ts through tsx on this port (as harness/process.ts does, but on a port of the
 * caller's: a restarted instance comes back where its clients look for it) and waits for /health.
 */
async function startTern(port: number, env: Record<string, string>, onLine: (line: string) => void): Promise<TernProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts')], {
    cwd: root,
    // only PATH and HOME from ours (nothing Tern reads), plus the run's configuration
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), HOST: '127.0.0.1', VIDEO_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  let partial = ''
  const take = (chunk: Buffer) => {
    output = (output + chunk).slice(-20_000)
    const lines = (partial + chunk).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) if (line.trim()) onLine(line)
  }
  // what a stalled start was doing: the output so far, at most the last 4,000 characters
  const tail = () => output.slice(-4000)
  child.stdout!.on('data', take)
  child.stderr!.on('data', take)
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const deadline = Date.now() + 90_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`tern exited early:\n${tail()}`)
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) })).ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`tern did not answer /health in 90 s:\n${tail()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { child, output: () => output, exited }
}

export interface Instance {
  name: string
  url: string
  port: number
  process: TernProcess | null
  /** false from the kill until the restarted process answers /health */
  up: boolean
}

export interface ClusterOptions {
  /** how many instances (2 needs PostgreSQL and Redis) */
  instances: number
  databaseUrl: string | null
  redisUrl: string | null
  /** the server's heartbeat: a half-open socket is dropped after one to two of these */
  heartbeatSeconds: number
}

export class Cluster {
  readonly instances: Instance[] = []
  private forget = () => {}
  /** the error lines the instances logged (LOG_LEVEL=error), over restarts */
  readonly errors: string[] = []
  private constructor(
    readonly database: TestDatabase,
    readonly dataDir: string,
    private readonly env: Record<string, string>,
  ) {}

  static async start(options: ClusterOptions): Promise<Cluster> {
    const dataDir = tempDir('tern-conformance-')
    // createTestDatabase reads TEST_DATABASE_URL: a database of the run's own next to it, or a SQLite file
    const database = await createTestDatabase(dataDir)
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      // the run's users all come from one address and write fast (as test/harness/server.ts lifts them)
      REGISTER_RATE_LIMIT: '100000/300',
      LOGIN_RATE_LIMIT: '100000/60',
      LOGIN_ACCOUNT_RATE_LIMIT: '100000/900',
      WRITE_RATE_LIMIT_IP: '10000000/60',
      WRITE_RATE_LIMIT_USER: '10000000/60',
      WS_FRAME_RATE_LIMIT: '100000/1',
      // reconnecting clients may hold sockets the server has not yet seen die
      WS_MAX_SOCKETS_PER_USER: '1000',
      WS_HEARTBEAT_SECONDS: String(options.heartbeatSeconds),
      // the check compares every client's whole log with the server's: nothing may be pruned
      UPDATE_LOG_KEEP: '100000000',
      ...(options.redisUrl ? { REDIS_URL: options.redisUrl, REDIS_PREFIX: `tern-conformance-${randomBytes(6).toString('hex')}:` } : {}),
    }
    const cluster = new Cluster(database, dataDir, env)
    // a run that ends abruptly (Ctrl-C, a timeout) takes its servers with it
    const orphans = () => {
      for (const instance of cluster.instances) instance.process?.child.kill('SIGKILL')
    }
    process.once('exit', orphans)
    cluster.forget = () => process.removeListener('exit', orphans)
    try {
      for (let i = 0; i < options.instances; i++) {
        const port = await freePort()
        cluster.instances.push({ name: `tern-${i + 1}`, url: `http://127.0.0.1:${port}`, port, process: null, up: false })
      }
      // at once: the migrator holds a lock while one of them migrates the fresh database
      const started = await Promise.allSettled(cluster.instances.map((instance) => cluster.launch(instance)))
      const failed = started.find((outcome) => outcome.status === 'rejected')
      if (failed) throw (failed as PromiseRejectedResult).reason
    } catch (error) {
      await cluster.stop()
      throw error
    }
    return cluster
  }

  private async launch(instance: Instance) {
    instance.process = await startTern(instance.port, this.env, (line) => {
      // pino's JSON lines below error (warn) are not failures; anything else (error, fatal, a stack) is
      const level = /^\{"level":(\d+)/.exec(line)?.[1]
      if (level === undefined || Number(level) >= 50) this.errors.push(`${instance.name}: ${line}`)
    })
    instance.up = true
  }

  /** The URLs of the instances that are up now. */
  live(): Instance[] {
    return this.instances.filter((instance) => instance.up)
  }

  /** SIGKILL: no shutdown, no close frames, whatever was in flight is cut. */
  async kill(instance: Instance) {
    instance.up = false
    const running = instance.process
    instance.process = null
    if (!running) return
    running.child.kill('SIGKILL')
    await running.exited
  }

  /** Starts a killed instance again on its port, database and data directory. */
  async restart(instance: Instance) {
    await this.launch(instance)
  }

  async stop() {
    for (const instance of this.instances) {
      instance.up = false
      const running = instance.process
      instance.process = null
      if (running && running.child.exitCode === null) {
        running.child.kill('SIGKILL')
        await running.exited
      }
    }
    this.forget()
    await this.database.drop().catch(() => {})
    fs.rmSync(this.dataDir, { recursive: true, force: true })
  }
}
