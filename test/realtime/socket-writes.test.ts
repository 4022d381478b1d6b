/**
 * A socket's frames of one burst leave in one write (realtime/connection.ts): the frames
 * a group commit hands one socket (its acks, each in place of the sender's own message.new) are
 * held until the burst ends and written together. Counted by the server (tern_ws_writes_total against
 * tern_ws_frames_sent_total), and seen by the client below ws, off its TCP socket, with the
 * server's frames parsed by hand (unmasked text frames).
 */
import assert from 'node:assert/strict'
import type { Socket } from 'node:net'
import test, { after } from 'node:test'
import { testDatabaseUrl } from '../harness/database.js'
import { registerUsers, send } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { TestSocket, type Frame } from '../harness/socket.js'

const METRICS_TOKEN = 'socket-writes-metrics-token-0123456789'
const server = await startTestServer({ env: { WS_FRAME_RATE_LIMIT: '1000/1', METRICS_TOKEN } })
after(() => server.close())

/** The server's frames and writes to sockets so far (/metrics). */
async function counted() {
  const res = await server.api.get('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  assert.equal(res.status, 200)
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(res.text)?.[1])
  return { frames: value('tern_ws_frames_sent_total'), writes: value('tern_ws_writes_total') }
}

/** The text frames in a byte stream, each with the index of the chunk that completed it. */
function framesOf(chunks: Buffer[]): { text: string; chunk: number }[] {
  const frames: { text: string; chunk: number }[] = []
  let pending = Buffer.alloc(0)
  chunks.forEach((chunk, index) => {
    pending = Buffer.concat([pending, chunk])
    for (;;) {
      if (pending.length < 2) break
      let length = pending[1] & 0x7f
      let offset = 2
      if (length === 126) {
        if (pending.length < 4) break
        length = pending.readUInt16BE(2)
        offset = 4
      } else if (length === 127) {
        if (pending.length < 10) break
        length = Number(pending.readBigUInt64BE(2))
        offset = 10
      }
      if (pending.length < offset + length) break
      assert.equal(pending[0], 0x81, 'a final text frame')
      frames.push({ text: pending.subarray(offset, offset + length).toString(), chunk: index })
      pending = pending.subarray(offset + length)
    }
  })
  return frames
}

test('the frames a batch of sends hands one socket reach it in one write: acks in place of their own message.new', async () => {
  const [alice, bob, carol, dave] = await registerUsers(server, 4)
  // three chats, so the three sends run side by side (one chat's sends take turns) and share a commit
  const chats = [(await send(alice, bob, 'hi')).chat_id, (await send(alice, carol, 'hi')).chat_id, (await send(alice, dave, 'hi')).chat_id]
  const socket = await TestSocket.connect(server.url, alice.token)
  // alice's other device: it gets her messages as message.new
  const device = await TestSocket.connect(server.url, alice.token)
  const tcp = (socket.ws as unknown as { _socket: Socket })._socket
  const chunks: Buffer[] = []
  tcp.on('data', (chunk: Buffer) => chunks.push(chunk))

  const before = await counted()
  assert.ok(Number.isFinite(before.writes), 'tern_ws_writes_total is exported')
  // the three frames leave the client in one write, so the server reads them in one go
  tcp.cork()
  for (const [i, chatId] of chats.entries())
    socket.ws.send(JSON.stringify({ type: 'send', id: `s${i}`, data: { chat_id: chatId, content: `burst ${i}` } }))
  tcp.uncork()
  const acks = []
  for (let i = 0; i < 3; i++) acks.push(await socket.answer(`s${i}`))
  const copies = []
  for (let i = 0; i < 3; i++) copies.push(await device.next('message.new'))

  // each ack carries the seq of alice's message.new, which the other device got with that seq
  for (const [i, ack] of acks.entries()) {
    assert.equal(ack.type, 'ack')
    const copy: Frame | undefined = copies.find((frame) => frame.data.message.message_id === ack.data.message_id)
    assert.ok(copy, `s${i}: the other device got its message.new`)
    assert.equal(ack.seq, copy.seq, `s${i}: the ack stands for that message.new`)
    assert.deepEqual(ack.data, copy.data.message)
  }
  const frames = framesOf(chunks)
  assert.equal(frames.length, 3, frames.map((f) => f.text.slice(0, 80)).join('\n'))
  assert.ok(
    frames.every((f) => f.text.startsWith('{"type":"ack"')),
    'no message.new of her own on the socket that sent them',
  )
  // in log order, as the other device got them
  assert.deepEqual(
    socket.received.filter((f) => f.seq !== undefined).map((f) => f.seq),
    copies.map((f) => f.seq),
  )
  // the server handed three frames to this socket and three to the other device, in at most three writes each
  const now = await counted()
  assert.equal(now.frames - before.frames, 6)
  const writes = now.writes - before.writes
  assert.ok(writes >= 2 && writes <= 6, `six frames in ${writes} writes`)
  // On SQLite the three sends share one group commit, so the frames to each socket leave in one
  // write. (On PostgreSQL each request first looks its session up with a query of its own, so the
  // sends may reach the batch, and their frames the socket, at different moments.)
  if (!testDatabaseUrl) {
    assert.equal(writes, 2, 'one write per socket for the batch')
    assert.equal(new Set(frames.map((f) => f.chunk)).size, 1, `one TCP chunk (chunks: ${chunks.map((c) => c.length)})`)
  }
})

test('a burst past 64 KiB for one socket is written in parts as it grows, and every frame arrives', async () => {
  const [alice, bob, carol] = await registerUsers(server, 3)
  const chats = [(await send(alice, bob, 'hi')).chat_id, (await send(alice, carol, 'hi')).chat_id]
  const socket = await TestSocket.connect(server.url, alice.token)
  const tcp = (socket.ws as unknown as { _socket: Socket })._socket
  // ~60 KB per frame: each send's message.new and ack pass the limit together
  const payload = 'x'.repeat(60_000)
  const before = await counted()
  tcp.cork()
  for (const [i, chatId] of chats.entries())
    socket.ws.send(
      JSON.stringify({
        type: 'send',
        id: `big${i}`,
        data: { chat_id: chatId, is_encrypted: true, encrypted_content: payload, encryption_key_id: 'k1' },
      }),
    )
  tcp.uncork()
  for (let i = 0; i < 2; i++) assert.equal((await socket.next('ack')).type, 'ack')
  // the message.new went out before its ack (written as the burst grew), so it comes as it is and the ack without a seq
  for (let i = 0; i < 2; i++) assert.equal((await socket.next('message.new')).data.message.encrypted_content, payload)
  assert.ok(socket.received.filter((f) => f.type === 'ack').every((f) => f.seq === undefined))
  assert.equal(socket.closed, null)
  const now = await counted()
  assert.equal(now.frames - before.frames, 4)
  const writes = now.writes - before.writes
  // held together they would be one write of ~240 KB (on SQLite, one commit)
  assert.ok(writes >= 2 && writes <= 4, `four frames of ~60 KB in ${writes} writes`)
})
