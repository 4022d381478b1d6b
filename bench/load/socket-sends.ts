/**
 * Load process for socket-sends' Tern side: each pair's sender and receiver hold a WebSocket; message
 * n is a `send` frame (`id` n, the messages/send body for the pair's personal chat, its text ending
 * with `#<n>`) on the sender's socket. It is done when the sender's socket has its `ack` (sent after
 * the commit: stored) and the receiver's socket its `message.new` (delivered). The load shape
 * (closed loop with a window per pair, or open loop at a rate) is bench/lib/pair-load.ts's.
 */
import type WebSocket from 'ws'
import { MESSAGE_TEXT, openSocket } from '../lib/api.js'
import { PairLoad, type PairLoadResult, type PairLoadSpec } from '../lib/pair-load.js'
import { serve } from './ipc.js'

export interface SocketSendsSpec extends PairLoadSpec {
  port: number
  pairs: { senderToken: string; receiverToken: string; chatId: number }[]
}

/** sockets opened at once */
const CONNECT_BATCH = 50

const ACK = '{"type":"ack","id":'
const MESSAGE_NEW = '{"type":"message.new"'
const CONTENT = '"content":"'

/** n of an ack frame: read straight from `{"type":"ack","id":<n>,` when the server writes it so, else parsed. */
function ackId(text: string): number {
  if (text.startsWith(ACK)) {
    const end = text.indexOf(',', ACK.length)
    const id = Number(text.slice(ACK.length, end))
    if (end > 0 && Number.isSafeInteger(id)) return id
  }
  return Number((JSON.parse(text) as { id: unknown }).id)
}

serve(async (spec: SocketSendsSpec): Promise<PairLoadResult> => {
  const load = new PairLoad(spec.pairs.length, true)
  const onSender = (raw: WebSocket.RawData) => {
    const now = performance.now()
    // `{"type":"m…`: the sender's own copy of its message.new, which builds before 2026-12-02 sent
    // beside the ack (now the ack takes its place): not what is measured (skipped undecoded)
    if ((raw as Buffer)[9] === 0x6d) return
    const text = String(raw)
    if (text.startsWith('{"type":"ack"')) {
      const id = ackId(text)
      if (!Number.isSafeInteger(id)) return load.fail(new Error(`an ack without a send's id: ${text.slice(0, 300)}`))
      return load.ackedAt(id, now)
    }
    // a refused send, or a frame-level error (rate limit, bad frame)
    if (text.startsWith('{"type":"error"')) return load.fail(new Error(`the server refused a frame: ${text.slice(0, 500)}`))
  }
  const onReceiver = (raw: WebSocket.RawData) => {
    const now = performance.now()
    const text = String(raw)
    if (!text.startsWith(MESSAGE_NEW)) {
      if (text.startsWith('{"type":"error"')) load.fail(new Error(`a receiver's socket got an error: ${text.slice(0, 500)}`))
      return
    }
    // the text ends with `#<n>`; MESSAGE_TEXT has no `#`
    const content = text.indexOf(CONTENT)
    const hash = text.indexOf('#', content)
    const n = Number(text.slice(hash + 1, text.indexOf('"', hash)))
    if (content < 0 || hash < 0 || !Number.isSafeInteger(n))
      return load.fail(new Error(`a message.new without its number: ${text.slice(0, 500)}`))
    load.deliveredAt(n, now)
  }

  const sockets: WebSocket[] = []
  const tokens = spec.pairs.flatMap((pair) => [pair.senderToken, pair.receiverToken])
  try {
    for (let i = 0; i < tokens.length; i += CONNECT_BATCH) {
      sockets.push(...(await Promise.all(tokens.slice(i, i + CONNECT_BATCH).map((token) => openSocket(spec.port, token)))))
    }
    sockets.forEach((socket, i) => {
      socket.on('message', i % 2 === 0 ? onSender : onReceiver)
      socket.on('error', (error) => load.fail(error))
      socket.on('close', (code) => load.fail(new Error(`the server closed a ${i % 2 === 0 ? 'sender' : 'receiver'} socket (${code})`)))
    })
    const heads = spec.pairs.map(
      (pair) => `,"data":{"chat_id":${pair.chatId},"content":${JSON.stringify(`${MESSAGE_TEXT} #`).slice(0, -1)}`,
    )
    return await load.run(spec, (pair, n) => sockets[2 * pair].send(`{"type":"send","id":${n}${heads[pair]}${n}"}}`))
  } finally {
    for (const socket of sockets) {
      socket.removeAllListeners('close')
      socket.terminate()
    }
  }
})
