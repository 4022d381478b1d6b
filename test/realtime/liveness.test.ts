/**
 * Connections that stop taking part: a peer that no longer answers pings is dropped (and its user
 * goes offline), and a client that stops reading is closed with 4008 before its backlog can grow
 * the server's memory, then resumes without losing or repeating anything.
 */
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import WebSocket from 'ws'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const HEARTBEAT_SECONDS = 1
const server = await startTestServer({ env: { WS_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS) } })
const raw: WebSocket[] = []
after(() => {
  for (const ws of raw) ws.terminate()
})

interface RawSocket {
  ws: WebSocket
  frames: { type: string; seq?: number; data: any }[]
  closed: Promise<{ code: number; at: number }>
}

/** A bare client: `autoPong: false` makes it a peer that has silently gone away. */
async function openRaw(on: TestServer, user: TestUser, options: { autoPong: boolean }): Promise<RawSocket> {
  const ws = new WebSocket(`${on.url.replace(/^http/, 'ws')}${V2}/ws`, {
    headers: { authorization: `Bearer ${user.token}` },
    autoPong: options.autoPong,
  })
  raw.push(ws)
  const frames: RawSocket['frames'] = []
  ws.on('message', (data) => frames.push(JSON.parse(String(data))))
  const closed = new Promise<{ code: number; at: number }>((resolve) => ws.once('close', (code) => resolve({ code, at: Date.now() })))
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  return { ws, frames, closed }
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)))
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

test('a socket that stops answering pings is dropped within two heartbeats, and its user goes offline', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  await send(alice, bob, 'hello')
  const bobSocket = await TestSocket.connect(server.url, bob.token)
  const answering = await openRaw(server, alice, { autoPong: true })
  const silent = await openRaw(server, alice, { autoPong: false })
  const opened = Date.now()
  const online = await bobSocket.next('presence')
  assert.deepEqual([online.data.user_id, online.data.is_online], [alice.id, true])

  const { code, at } = await within(silent.closed, (2 * HEARTBEAT_SECONDS + 2) * 1000, 'the silent socket is dropped')
  assert.equal(code, 1006, 'terminated, not closed politely: the peer is not listening')
  assert.ok(at - opened >= HEARTBEAT_SECONDS * 1000 - 100, `dropped after ${at - opened} ms: only after a ping went unanswered`)
  // alice still has a live device: she stays online
  assert.deepEqual(await bobSocket.drain('presence', 300), [])
  assert.equal(answering.ws.readyState, WebSocket.OPEN)

  answering.ws.terminate()
  const offline = await bobSocket.next('presence', (2 * HEARTBEAT_SECONDS + 3) * 1000)
  assert.deepEqual([offline.data.user_id, offline.data.is_online], [alice.id, false])
  assert.equal(typeof offline.data.last_seen, 'string')
  // bob's own socket answers pings (the ws client does by default) and outlives several heartbeats
  assert.equal(bobSocket.closed, null)
})

test('a client that stops reading is closed with 4008 and resumes without a gap or a repeat', async () => {
  // the default heartbeat: a client that reads nothing for two short ones would be dropped as dead first
  const server = await startTestServer()
  const [alice, bob] = await registerUsers(server, 2)
  const chatId = (await send(alice, bob, 'first')).chat_id as number
  const reader = await openRaw(server, bob, { autoPong: true })
  while (!reader.frames.some((f) => f.type === 'ready'))
    await new Promise((resolve) => setTimeout(resolve, 10))
    // stop reading: the kernel's buffers fill, then the server's send buffer
  ;(reader.ws as unknown as { _socket: { pause(): void } })._socket.pause()

  // well over the 1 MiB the server buffers per socket plus what the kernel holds on loopback
  const big = 'x'.repeat(4000)
  const total = 3000
  const contents = Array.from({ length: total }, (_, i) => `${i} ${big}`)
  for (let i = 0; i < total; i += 50) {
    await Promise.all(contents.slice(i, i + 50).map((content) => alice.api.post(`${V2}/messages/send`, { chat_id: chatId, content })))
  }

  ;(reader.ws as unknown as { _socket: { resume(): void } })._socket.resume()
  const { code } = await within(reader.closed, 30_000, 'the slow socket is closed')
  assert.equal(code, 4008)
  const got = reader.frames.filter((f) => f.type === 'message.new')
  assert.ok(got.length < total, `dropped before the whole backlog went out (got ${got.length} of ${total})`)
  const seqs = got.map((f) => f.seq!)
  assert.deepEqual(
    seqs,
    seqs.map((_, i) => seqs[0] + i),
    'what arrived before the close is gap-free',
  )

  const again = await TestSocket.connect(server.url, bob.token)
  again.send({ type: 'resume', seq: seqs.at(-1) })
  const rest = []
  while (rest.length < total - got.length) rest.push(await again.next('message.new', 10_000))
  // concurrent sends commit in any order: each arrives once, and the seqs run on without a gap
  const all = [...got, ...rest]
  const numbers = all.map((f) => Number(String(f.data.message.content).split(' ')[0]))
  assert.deepEqual(
    [...numbers].sort((a, b) => a - b),
    contents.map((_, i) => i),
    'every message once',
  )
  assert.deepEqual(
    all.map((f) => f.seq),
    all.map((_, i) => all[0].seq! + i),
    'in order',
  )
  assert.deepEqual(await again.drain('message.new', 300), [], 'nothing twice')
  await again.close()
})
