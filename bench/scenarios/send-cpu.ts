/**
 * send-cpu: the CPU work of one V2/messages/send against one request of the bare Fastify + SQLite
 * insert route, as instructions counted by valgrind (callgrind) in the server process, all its
 * threads. Unlike req/s, the count does not move when the machine is shared or its hypervisor
 * withholds CPU (steal), so it compares builds and baselines on any machine. It leaves out the
 * kernel's share (socket and file writes), which is larger for the bare route (one commit per
 * request) than for Tern (group commits), so the time ratio of send-throughput is the kinder one.
 *
 * Each server runs under valgrind with instrumentation off until its JIT has settled (WARM_UP
 * sends), then counts exactly MEASURED sends: 32 in flight, as in send-throughput's closed loop.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { MESSAGE_TEXT, openChat, registerMany, V2 } from '../lib/api.js'
import { encodeRequest, HttpConnection } from '../lib/http-client.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, type BenchContext, type Scenario } from '../lib/scenario.js'
import { startServer, type Server, type ServerKind } from '../lib/server.js'

const WARM_UP = 6_000
const MEASURED = 3_000
const IN_FLIGHT = 32

/** Sends `count` requests, one in flight per keep-alive connection. */
async function sendMany(connections: HttpConnection[], requests: Buffer[], count: number) {
  let next = 0
  await Promise.all(connections.map(async (connection) => {
    while (next < count) {
      const response = await connection.request(requests[next++ % requests.length])
      if (response.status !== 200) throw new Error(`send answered ${response.status}: ${response.body.toString().slice(0, 200)}`)
    }
  }))
}

function hasValgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
    execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Instructions per send of one server kind, from a fresh server and data directory. */
async function measure(ctx: BenchContext, kind: ServerKind): Promise<number> {
  const dataDir = makeDataDir(`cpu-${kind}`)
  const vgdb = path.join(dataDir, 'vgdb')
  const counts = path.join(dataDir, 'callgrind.out')
  let server: Server | null = null
  let connections: HttpConnection[] = []
  try {
    server = await startServer(ctx.machine, kind, dataDir, {
      wrapper: ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--vgdb-prefix=${vgdb}`, `--callgrind-out-file=${counts}`],
      startTimeoutMs: 180_000,
    })
    const requests: Buffer[] = []
    // Tern: two personal chats, each sender with its own session; the bare route ignores both.
    const users = kind === 'tern' ? await registerMany(server.url, 'cpu', 4) : []
    for (let i = 0; i < 2; i++) {
      const chatId = kind === 'tern' ? await openChat(server.url, users[2 * i], users[2 * i + 1]) : i + 1
      const headers: Record<string, string> = users.length ? { authorization: `Bearer ${users[2 * i].token}` } : {}
      requests.push(encodeRequest('127.0.0.1', { method: 'POST', path: `${V2}/messages/send`, headers, body: { chat_id: chatId, content: MESSAGE_TEXT } }))
    }
    const port = server.port
    connections = await Promise.all(Array.from({ length: IN_FLIGHT }, () => HttpConnection.connect(port)))
    await sendMany(connections, requests, WARM_UP)
    // vgdb names its pipes after the server's HOST variable (startServer sets 127.0.0.1)
    const control = (...args: string[]) =>
      execFileSync('callgrind_control', [`--vgdb-prefix=${vgdb}`, ...args, String(server!.pid)], {
        stdio: 'ignore',
        env: { ...process.env, HOST: '127.0.0.1' },
      })
    control('--instr=on')
    control('--zero')
    await sendMany(connections, requests, MEASURED)
    control('--dump')
    const dumps = fs.readdirSync(dataDir).filter((name) => name.startsWith('callgrind.out.'))
    const totals = dumps.map((name) => Number(/^summary: (\d+)$/m.exec(fs.readFileSync(path.join(dataDir, name), 'utf8'))?.[1] ?? 0))
    const instructions = Math.max(0, ...totals)
    if (!instructions) throw new Error(`no callgrind dump of ${kind} (${dumps.join(', ') || 'none'})`)
    return instructions / MEASURED
  } finally {
    for (const connection of connections) connection.close()
    await server?.stop()
    removeDataDir(dataDir)
  }
}

export const sendCpu: Scenario = {
  name: 'send-cpu',
  summary: 'instructions per V2/messages/send vs per bare Fastify + SQLite insert request (valgrind; immune to steal)',
  async run(ctx) {
    if (!hasValgrind()) throw new Error('send-cpu needs valgrind (Debian package valgrind)')
    const bare: number[] = []
    const tern: number[] = []
    for (let run = 1; run <= ctx.runs; run++) {
      bare.push(await measure(ctx, 'bare-insert'))
      tern.push(await measure(ctx, 'tern'))
      ctx.log(`  run ${run}: bare ${fmt(bare.at(-1)!)}, Tern ${fmt(tern.at(-1)!)} instructions per request`)
    }
    const scenario = this.name
    const rows: Row[] = [
      { scenario, figure: 'bare Fastify + 1 SQLite insert, per request', unit: 'k instr', samples: bare.map((n) => n / 1000) },
      { scenario, figure: 'Tern V2/messages/send, per send', unit: 'k instr', samples: tern.map((n) => n / 1000) },
      { scenario, figure: 'bare / Tern (user-space CPU work)', unit: 'x', samples: tern.map((n, i) => bare[i] / n) },
    ]
    return rows
  },
}
