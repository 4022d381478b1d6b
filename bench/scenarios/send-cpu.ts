/**
 * send-cpu: the CPU work of one message sent, as instructions counted by valgrind (callgrind) in
 * the server process: one V2/messages/send, one `send` frame over the WebSocket (stored, acked and
 * delivered to the peer's socket), and one request of the bare Fastify + SQLite insert route.
 * Unlike req/s, the count does not move when the machine is shared or its hypervisor withholds CPU
 * (steal), so it compares builds and baselines on any machine. It leaves out the kernel's share
 * (socket and file writes), which is larger for the bare route (one commit per request) than for
 * Tern (group commits), so the time ratio of send-throughput is the kinder one.
 *
 * Threads are counted apart (--separate-threads): the main thread, where a send's latency is
 * made, and the rest (Tern's WAL checkpointer, its search index worker, V8's compiler), whose
 * work is partly paced by the clock, so that valgrind's slowdown inflates it per message.
 *
 * Each server runs under valgrind with instrumentation off until its JIT has settled (WARM_UP
 * sends), then counts exactly MEASURED sends: 32 in flight over HTTP, as in send-throughput's
 * closed loop; over sockets 16 pairs with 2 in flight each.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type WebSocket from 'ws'
import { MESSAGE_TEXT, openChat, openSocket, registerMany, V2 } from '../lib/api.js'
import { encodeRequest, HttpConnection } from '../lib/http-client.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, type BenchContext, type Scenario } from '../lib/scenario.js'
import { startServer, type Server, type ServerKind } from '../lib/server.js'

const WARM_UP = 6_000
const MEASURED = 3_000
const IN_FLIGHT = 32
/** socket sends: sender → receiver pairs, and messages in flight per pair */
const SOCKET_PAIRS = 16
const SOCKET_WINDOW = 2

/** Instructions per message: the main thread's and every other thread's. */
interface Counted {
  main: number
  others: number
}

type Target = 'http' | 'socket'

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


interface SocketPair {
  sender: WebSocket
  receiver: WebSocket
  chatId: number
}

/**
 * Sends `count` messages over the pairs' sockets, SOCKET_WINDOW in flight per pair; message n is
 * done when its sender has the ack and its receiver the message.new. Ids start at `first`.
 */
function socketSendMany(pairs: SocketPair[], first: number, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let next = first
    const end = first + count
    let done = 0
    /** per message in flight: its pair and how many of (ack, delivery) are still due */
    const open = new Map<number, { pair: number; due: number }>()
    const sendNext = (pair: number) => {
      if (next >= end) return
      const n = next++
      open.set(n, { pair, due: 2 })
      pairs[pair].sender.send(JSON.stringify({ type: 'send', id: n, data: { chat_id: pairs[pair].chatId, content: `${MESSAGE_TEXT} #${n}` } }))
    }
    const settle = (n: number) => {
      const entry = open.get(n)
      if (!entry || --entry.due > 0) return
      open.delete(n)
      if (++done === count) return finish()
      sendNext(entry.pair)
    }
    const onFrame = (raw: WebSocket.RawData) => {
      const frame = JSON.parse(String(raw)) as { type: string; id?: number }
      if (frame.type === 'error') return fail(new Error(`the server refused a frame: ${String(raw).slice(0, 300)}`))
      if (frame.type === 'ack') return settle(frame.id!)
    }
    const listeners = pairs.map((pair) => {
      const onDelivery = (raw: WebSocket.RawData) => {
        const frame = JSON.parse(String(raw)) as { type: string; data?: { message?: { content?: string } } }
        if (frame.type !== 'message.new') return
        const content = frame.data?.message?.content ?? ''
        settle(Number(content.slice(content.lastIndexOf('#') + 1)))
      }
      const onClose = (code: number) => fail(new Error(`the server closed a socket (${code})`))
      pair.sender.on('message', onFrame)
      pair.receiver.on('message', onDelivery)
      for (const socket of [pair.sender, pair.receiver]) socket.on('close', onClose)
      return () => {
        pair.sender.off('message', onFrame)
        pair.receiver.off('message', onDelivery)
        for (const socket of [pair.sender, pair.receiver]) socket.off('close', onClose)
      }
    })
    const stop = () => listeners.forEach((off) => off())
    const finish = () => (stop(), resolve())
    const fail = (error: Error) => (stop(), reject(error))
    pairs.forEach((_, pair) => {
      for (let i = 0; i < SOCKET_WINDOW; i++) sendNext(pair)
    })
  })
}

/** The callgrind dumps' counts: thread 1 (the main thread) apart from the others. */
function dumpedCounts(dataDir: string): Counted {
  let main = 0
  let others = 0
  // --separate-threads: callgrind.out.<dump>-<thread>
  for (const name of fs.readdirSync(dataDir)) {
    const match = /^callgrind\.out\.\d+-(\d+)$/.exec(name)
    if (!match) continue
    const total = Number(/^summary: (\d+)$/m.exec(fs.readFileSync(path.join(dataDir, name), 'utf8'))?.[1] ?? 0)
    if (Number(match[1]) === 1) main += total
    else others += total
  }
  return { main, others }
}

/** Instructions per message of one server kind and way of sending, from a fresh server and data directory. */
async function measure(ctx: BenchContext, kind: ServerKind, target: Target = 'http'): Promise<Counted> {
  const dataDir = makeDataDir(`cpu-${kind}`)
  const vgdb = path.join(dataDir, 'vgdb')
  const counts = path.join(dataDir, 'callgrind.out')
  let server: Server | null = null
  let connections: HttpConnection[] = []
  const sockets: WebSocket[] = []
  try {
    server = await startServer(ctx.machine, kind, dataDir, {
      wrapper: ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--vgdb-prefix=${vgdb}`, `--callgrind-out-file=${counts}`, '--separate-threads=yes'],
      startTimeoutMs: 180_000,
    })
    let run: (count: number) => Promise<void>
    if (target === 'socket') {
      const users = await registerMany(server.url, 'cpu', 2 * SOCKET_PAIRS)
      const pairs: SocketPair[] = []
      for (let i = 0; i < SOCKET_PAIRS; i++) {
        const chatId = await openChat(server.url, users[2 * i], users[2 * i + 1])
        const [sender, receiver] = await Promise.all([openSocket(server.port, users[2 * i].token), openSocket(server.port, users[2 * i + 1].token)])
        sockets.push(sender, receiver)
        pairs.push({ sender, receiver, chatId })
      }
      let first = 1
      run = async (count) => {
        await socketSendMany(pairs, first, count)
        first += count
      }
    } else {
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
      run = (count) => sendMany(connections, requests, count)
    }
    await run(WARM_UP)
    // vgdb names its pipes after the server's HOST variable (startServer sets 127.0.0.1)
    const control = (...args: string[]) =>
      execFileSync('callgrind_control', [`--vgdb-prefix=${vgdb}`, ...args, String(server!.pid)], {
        stdio: 'ignore',
        env: { ...process.env, HOST: '127.0.0.1' },
      })
    control('--instr=on')
    control('--zero')
    await run(MEASURED)
    control('--dump')
    const { main, others } = dumpedCounts(dataDir)
    if (!main) throw new Error(`no callgrind dump of ${kind}'s main thread (${fs.readdirSync(dataDir).join(', ')})`)
    return { main: main / MEASURED, others: others / MEASURED }
  } finally {
    for (const connection of connections) connection.close()
    for (const socket of sockets) socket.terminate()
    await server?.stop()
    removeDataDir(dataDir)
  }
}

export const sendCpu: Scenario = {
  name: 'send-cpu',
  summary: 'instructions per message: V2/messages/send and socket send frames vs a bare Fastify + SQLite insert request (valgrind; immune to steal)',
  async run(ctx) {
    if (!hasValgrind()) throw new Error('send-cpu needs valgrind (Debian package valgrind)')
    const bare: Counted[] = []
    const tern: Counted[] = []
    const socket: Counted[] = []
    const both = (counted: Counted) => `${fmt(counted.main)} + ${fmt(counted.others)} in other threads`
    for (let run = 1; run <= ctx.runs; run++) {
      bare.push(await measure(ctx, 'bare-insert'))
      tern.push(await measure(ctx, 'tern'))
      socket.push(await measure(ctx, 'tern', 'socket'))
      ctx.log(`  run ${run}, instructions per message on the main thread + other threads: bare ${both(bare.at(-1)!)}; Tern HTTP ${both(tern.at(-1)!)}; Tern socket ${both(socket.at(-1)!)}`)
    }
    const scenario = this.name
    const k = (counts: Counted[], pick: (c: Counted) => number) => counts.map((c) => pick(c) / 1000)
    const rows: Row[] = [
      { scenario, figure: 'bare Fastify + 1 SQLite insert, per request: main thread', unit: 'k instr', samples: k(bare, (c) => c.main) },
      { scenario, figure: 'bare, per request: other threads (V8\'s GC and compiler)', unit: 'k instr', samples: k(bare, (c) => c.others) },
      { scenario, figure: 'Tern V2/messages/send, per send: main thread', unit: 'k instr', samples: k(tern, (c) => c.main) },
      { scenario, figure: 'Tern V2/messages/send, per send: other threads (see note)', unit: 'k instr', samples: k(tern, (c) => c.others) },
      { scenario, figure: 'Tern socket send (stored, acked, delivered), per message: main thread', unit: 'k instr', samples: k(socket, (c) => c.main) },
      { scenario, figure: 'Tern socket send, per message: other threads (see note)', unit: 'k instr', samples: k(socket, (c) => c.others) },
      { scenario, figure: 'bare / Tern HTTP, main threads', unit: 'x', samples: tern.map((c, i) => bare[i].main / c.main) },
      { scenario, figure: 'bare / Tern HTTP, all threads', unit: 'x', samples: tern.map((c, i) => (bare[i].main + bare[i].others) / (c.main + c.others)) },
    ]
    ctx.log('  note: other threads\' counts are partly paced by the clock (Tern\'s WAL checkpoint every 25 ms, its search index worker, V8\'s compiler), so valgrind\'s slowdown inflates them per message; the main threads\' counts are the comparable ones')
    return rows
  },
}
