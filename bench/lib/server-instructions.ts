/**
 * Instructions a message costs in a server process, counted by valgrind's callgrind: the server
 * runs under valgrind with instrumentation off until its JIT has settled (`warmUp` messages), then
 * counts exactly `measured` messages, over HTTP (`POST V2/messages/send`, `inFlight` keep-alive
 * connections) or the WebSocket (`send` frames, `pairs` sender → receiver pairs with `window` in
 * flight each; a message is done on its ack and its receiver's `message.new`). Used by send-cpu
 * (Tern against the bare route) and bench/instructions.ts (two builds of Tern).
 *
 * Threads are counted apart (--separate-threads): the main thread, where a send's latency is made,
 * and the rest (Tern's WAL checkpointer, its search index worker, V8's compiler), whose work is
 * partly paced by the clock, so that valgrind's slowdown inflates it per message.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type WebSocket from 'ws'
import { MESSAGE_TEXT, openChat, openSocket, registerMany, V2 } from './api.js'
import { encodeRequest, HttpConnection } from './http-client.js'
import type { Machine } from './machine.js'
import { makeDataDir, removeDataDir } from './processes.js'
import { startServer, type Server, type ServerKind } from './server.js'

/** Instructions per message: the main thread's and every other thread's. */
export interface Counted {
  main: number
  others: number
}

export interface CountSpec {
  kind: ServerKind
  target: 'http' | 'socket'
  /** Tern only: the checkout whose dist/ runs (default: this one) */
  root?: string
  warmUp: number
  measured: number
  /** http: keep-alive connections, one request in flight on each */
  inFlight?: number
  /** socket: sender → receiver pairs, each in its own personal chat, and messages in flight per pair */
  pairs?: number
  window?: number
}

export function hasValgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
    execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Sends `count` requests, one in flight per keep-alive connection. */
async function sendMany(connections: HttpConnection[], requests: Buffer[], count: number) {
  let next = 0
  await Promise.all(
    connections.map(async (connection) => {
      while (next < count) {
        const response = await connection.request(requests[next++ % requests.length])
        if (response.status !== 200) throw new Error(`send answered ${response.status}: ${response.body.toString().slice(0, 200)}`)
      }
    }),
  )
}

interface SocketPair {
  sender: WebSocket
  receiver: WebSocket
  chatId: number
}

/**
 * Sends `count` messages over the pairs' sockets, `window` in flight per pair; message n is done
 * when its sender has the ack and its receiver the message.new. Ids start at `first`.
 */
function socketSendMany(pairs: SocketPair[], window: number, first: number, count: number): Promise<void> {
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
      pairs[pair].sender.send(
        JSON.stringify({ type: 'send', id: n, data: { chat_id: pairs[pair].chatId, content: `${MESSAGE_TEXT} #${n}` } }),
      )
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
    const stop = () => {
      for (const off of listeners) off()
    }
    const finish = () => {
      stop()
      resolve()
    }
    const fail = (error: Error) => {
      stop()
      reject(error)
    }
    pairs.forEach((_, pair) => {
      for (let i = 0; i < window; i++) sendNext(pair)
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

/** Instructions per message of one server and way of sending, from a fresh server and data directory. */
export async function countInstructions(machine: Machine, spec: CountSpec): Promise<Counted> {
  const { kind, target } = spec
  const dataDir = makeDataDir(`cpu-${kind}`)
  const vgdb = path.join(dataDir, 'vgdb')
  const counts = path.join(dataDir, 'callgrind.out')
  let server: Server | null = null
  let connections: HttpConnection[] = []
  const sockets: WebSocket[] = []
  try {
    server = await startServer(machine, kind, dataDir, {
      wrapper: [
        'valgrind',
        '--tool=callgrind',
        '--instr-atstart=no',
        `--vgdb-prefix=${vgdb}`,
        `--callgrind-out-file=${counts}`,
        '--separate-threads=yes',
      ],
      startTimeoutMs: 180_000,
      root: spec.root,
    })
    let run: (count: number) => Promise<void>
    if (target === 'socket') {
      const pairCount = spec.pairs ?? 16
      const window = spec.window ?? 2
      const users = await registerMany(server.url, 'cpu', 2 * pairCount)
      const pairs: SocketPair[] = []
      for (let i = 0; i < pairCount; i++) {
        const chatId = await openChat(server.url, users[2 * i], users[2 * i + 1])
        const [sender, receiver] = await Promise.all([
          openSocket(server.port, users[2 * i].token),
          openSocket(server.port, users[2 * i + 1].token),
        ])
        sockets.push(sender, receiver)
        pairs.push({ sender, receiver, chatId })
      }
      let first = 1
      run = async (count) => {
        await socketSendMany(pairs, window, first, count)
        first += count
      }
    } else {
      const requests: Buffer[] = []
      // Tern: two personal chats, each sender with its own session; the bare route ignores both.
      const users = kind === 'tern' ? await registerMany(server.url, 'cpu', 4) : []
      for (let i = 0; i < 2; i++) {
        const chatId = kind === 'tern' ? await openChat(server.url, users[2 * i], users[2 * i + 1]) : i + 1
        const headers: Record<string, string> = users.length ? { authorization: `Bearer ${users[2 * i].token}` } : {}
        requests.push(
          encodeRequest('127.0.0.1', {
            method: 'POST',
            path: `${V2}/messages/send`,
            headers,
            body: { chat_id: chatId, content: MESSAGE_TEXT },
          }),
        )
      }
      const port = server.port
      connections = await Promise.all(Array.from({ length: spec.inFlight ?? 32 }, () => HttpConnection.connect(port)))
      run = (count) => sendMany(connections, requests, count)
    }
    await run(spec.warmUp)
    // vgdb names its pipes after the server's HOST variable (startServer sets 127.0.0.1)
    const control = (...args: string[]) =>
      execFileSync('callgrind_control', [`--vgdb-prefix=${vgdb}`, ...args, String(server!.pid)], {
        stdio: 'ignore',
        env: { ...process.env, HOST: '127.0.0.1' },
      })
    control('--instr=on')
    control('--zero')
    await run(spec.measured)
    control('--dump')
    const { main, others } = dumpedCounts(dataDir)
    if (!main) throw new Error(`no callgrind dump of ${kind}'s main thread (${fs.readdirSync(dataDir).join(', ')})`)
    return { main: main / spec.measured, others: others / spec.measured }
  } finally {
    for (const connection of connections) connection.close()
    for (const socket of sockets) socket.terminate()
    await server?.stop()
    removeDataDir(dataDir)
  }
}
