/**
 * Runs Tern as a real process (`src/main.ts` through tsx), for what only a process can show:
 * configuration errors at start-up, signals and graceful shutdown, start-up options.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '../..')

export interface TernProcess {
  url: string
  child: ChildProcess
  output(): string
  /** resolves with the exit code once the process has ended */
  exited: Promise<number | null>
}

export async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A child's environment: only PATH and HOME from ours (nothing Tern reads), plus `env`. */
const childEnv = (env: Record<string, string>): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  ...env,
})

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs a TypeScript entry of Tern (e.g. src/cli/main.ts) with these arguments, environment and standard input. */
export function runNode(script: string, args: string[], env: Record<string, string>, stdin = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: root, env: childEnv(env) })
    child.stdin.end(stdin)
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** How to run Tern: its source through tsx, or `npm start` exactly as the README says (the compiled dist/). */
export type Launch = 'tsx' | 'npm start'

function spawnTern(env: Record<string, string>, launch: Launch = 'tsx') {
  const [command, args] =
    launch === 'npm start' ? ['npm', ['start', '--silent']] : [process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts')]]
  const child = spawn(command, args, {
    cwd: root,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, output: () => output, exited }
}

/** Runs Tern with an environment that must make start-up fail; returns exit code and output. */
export async function runFailingStart(env: Record<string, string>) {
  const run = spawnTern({ VIDEO_PORT: '0', ...env })
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 15_000)
  const code = await run.exited
  clearTimeout(timer)
  return { code, output: run.output() }
}

/** Starts Tern on a free port and waits until /health answers. */
export async function startTern(env: Record<string, string>, launch: Launch = 'tsx'): Promise<TernProcess> {
  const port = await freePort()
  // the in-process video service on a free port too (VIDEO_PORT=0), so parallel runs never collide on 5001
  const run = spawnTern({ PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', VIDEO_PORT: '0', ...env }, launch)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 45_000
  for (;;) {
    if (run.child.exitCode !== null) throw new Error(`tern exited early:\n${run.output()}`)
    try {
      if ((await fetch(`${url}/health`)).ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      run.child.kill('SIGKILL')
      throw new Error(`tern did not answer /health in 45 s:\n${run.output()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { url, ...run }
}
