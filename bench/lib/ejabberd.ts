/**
 * An ejabberd of the bench's own (Debian's `ejabberd` package, never the system service): its own
 * configuration and Mnesia spool in a temporary directory in memory (/dev/shm), its own c2s port
 * on 127.0.0.1, a node name and cookie of its own, and Erlang distribution on a port of its own
 * without epmd (so nothing is left running and no other Erlang node is touched). It runs pinned
 * to the server core like Tern, with ejabberdctl's VM options.
 *
 * It relays and does not store: no mod_offline, no mod_mam, no roster; the accounts are the only
 * thing in Mnesia (written once, at registration). No TLS and no traffic shaper on the listener,
 * in-band registration open to anyone (how the load makes its accounts): a bench configuration.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { ChildProcess } from 'node:child_process'
import type { Machine } from './machine.js'
import { freePort, SERVER_CORE, sleep, spawnPinned, stopChild } from './processes.js'

const ERL = '/usr/bin/erl'
/** where Debian's package puts ejabberd's own application (its dependencies are in /usr/lib/erlang/lib) */
const LIB_ROOTS = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib']

export const EJABBERD_DOMAIN = 'bench.localhost'

export interface Ejabberd {
  port: number
  domain: string
  pid: number
  /** the package version, from the application's directory name */
  version: string
  stop(): Promise<void>
}

/** The directory holding `ejabberd-<version>/ebin/ejabberd.app` (ERL_LIBS), or null. */
function findEjabberd(): { libs: string; version: string } | null {
  for (const root of LIB_ROOTS) {
    let names: string[] = []
    try {
      names = fs.readdirSync(root)
    } catch {
      continue
    }
    const found = names.filter((name) => /^ejabberd-\d/.test(name) && fs.existsSync(path.join(root, name, 'ebin', 'ejabberd.app'))).sort()
    if (found.length) return { libs: root, version: found.at(-1)!.slice('ejabberd-'.length) }
  }
  return null
}

/** Why ejabberd cannot be measured here (not installed), or null when it can. */
export function ejabberdMissing(): string | null {
  if (!fs.existsSync(ERL)) return `${ERL} is missing (Erlang is not installed)`
  if (!findEjabberd()) return `no ejabberd application under ${LIB_ROOTS.join(', ')} (apt-get install ejabberd)`
  return null
}

function config(port: number): string {
  return `# written by bench/lib/ejabberd.ts
hosts:
  - ${EJABBERD_DOMAIN}
loglevel: warning
log_rotate_count: 0
auth_method: internal
auth_password_format: plain
# the load registers its 200 accounts in band from one address, in a second
registration_timeout: infinity
listen:
  -
    port: ${port}
    ip: "127.0.0.1"
    module: ejabberd_c2s
    shaper: none
    max_stanza_size: 65536
access_rules:
  register:
    allow: all
modules:
  mod_register:
    access: register
`
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-30).join('\n')
  } catch {
    return '(no output)'
  }
}

/** Accepts a TCP connection on the port (ejabberd opens its listeners once its modules started). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' }, () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

export async function startEjabberd(machine: Machine): Promise<Ejabberd> {
  const found = findEjabberd()
  if (!found || !fs.existsSync(ERL)) throw new Error(`ejabberd is not installed: ${ejabberdMissing()}`)
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir()
  const dir = fs.mkdtempSync(path.join(base, 'tern-bench-ejabberd-'))
  const spool = path.join(dir, 'spool')
  fs.mkdirSync(spool)
  const port = await freePort()
  const distPort = await freePort()
  const configFile = path.join(dir, 'ejabberd.yml')
  fs.writeFileSync(configFile, config(port))
  const logFile = path.join(dir, 'ejabberd.log')
  const outFile = path.join(dir, 'erl.out')
  const out = fs.openSync(outFile, 'a')
  const id = randomBytes(6).toString('hex')
  const child: ChildProcess = spawnPinned(
    machine,
    SERVER_CORE,
    [
      ERL,
      '-sname',
      `tern-bench-${id}@localhost`,
      '-setcookie',
      randomBytes(16).toString('hex'),
      // distribution on a port of its own, without epmd: nothing outlives the run
      '-start_epmd',
      'false',
      '-erl_epmd_port',
      String(distPort),
      '-kernel',
      'inet_dist_use_interface',
      '{127,0,0,1}',
      '-noinput',
      '-noshell',
      // ejabberdctl's VM options
      '+K',
      'true',
      '+P',
      '250000',
      // one scheduler (and one dirty CPU scheduler) for its one core, as the VM would pick on a
      // one-core machine; it counts the machine's cores, not the affinity mask, and would run two
      '+S',
      '1:1',
      '+SDcpu',
      '1:1',
      '-mnesia',
      'dir',
      JSON.stringify(spool),
      '-s',
      'ejabberd',
    ],
    {
      PATH: process.env.PATH,
      HOME: dir,
      ERL_LIBS: found.libs,
      EJABBERD_CONFIG_PATH: configFile,
      EJABBERD_LOG_PATH: logFile,
      ERL_CRASH_DUMP: path.join(dir, 'erl_crash.dump'),
      ERL_MAX_PORTS: '32000',
      ERL_MAX_ETS_TABLES: '1400',
    },
    ['ignore', out, out],
  )
  fs.closeSync(out)
  const cleanUp = () => fs.rmSync(dir, { recursive: true, force: true })
  const deadline = Date.now() + 60_000
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`ejabberd exited early:\n${tail(outFile)}\n${tail(logFile)}`)
      if (await listening(port)) break
      if (Date.now() > deadline) throw new Error(`ejabberd did not listen within 60 s:\n${tail(outFile)}\n${tail(logFile)}`)
      await sleep(100)
    }
  } catch (error) {
    await stopChild(child, 0)
    cleanUp()
    throw error
  }
  return {
    port,
    domain: EJABBERD_DOMAIN,
    pid: child.pid!,
    version: found.version,
    stop: async () => {
      // the VM takes SIGTERM as init:stop(): ejabberd and Mnesia stop in order
      await stopChild(child, 10_000)
      cleanUp()
    },
  }
}
