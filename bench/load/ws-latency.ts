/**
 * Load process for ws-latency: each receiver holds a WebSocket; senders post messages at a fixed
 * rate (open loop) and every `message.new` frame is matched to its send by the `#<i>` that ends
 * its content. Latency runs from writing the HTTP request to receiving the frame.
 */
import WebSocket from 'ws'
import { MESSAGE_TEXT, V2 } from '../lib/api.js'
import { encodeRequest } from '../lib/http-client.js'
import { openLoop } from '../lib/load-engine.js'
import { sleep } from '../lib/processes.js'
import { summarizeLatencies, type LatencySummary } from '../lib/stats.js'
import { serve } from './ipc.js'

export interface WsLatencySpec {
  port: number
  rate: number
  connections: number
  warmupMs: number
  durationMs: number
  pairs: { senderToken: string; chatId: number; receiverToken: string }[]
}

export interface WsLatencyResult {
  /** messages sent in the measurement window */
  sent: number
  /** of all messages sent, how many never reached their receiver's socket */
  missing: number
  sendRate: number
  latency: LatencySummary
  cpu: number
}

/** How long frames still in flight may take after the last send. */
const GRACE_MS = 3000

function connect(port: number, token: string, onFrame: (raw: string) => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}${V2}/ws`, { headers: { authorization: `Bearer ${token}` } })
    // a socket that never says ready fails the run instead of hanging the bench
    const timer = setTimeout(() => {
      socket.terminate()
      reject(new Error('no ready frame within 10 s'))
    }, 10_000)
    socket.once('error', reject)
    socket.once('close', (code) => reject(new Error(`closed before ready (${code})`)))
    socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)))
    socket.once('message', (raw) => {
      clearTimeout(timer)
      if (!String(raw).includes('"ready"')) return reject(new Error(`first frame is not ready: ${String(raw)}`))
      socket.on('message', (frame) => onFrame(String(frame)))
      resolve(socket)
    })
  })
}

serve(async (spec: WsLatencySpec): Promise<WsLatencyResult> => {
  const sentAt: number[] = []
  const latencies: number[] = []
  let received = 0
  let measureFrom = Infinity
  const onFrame = (raw: string) => {
    const now = performance.now()
    const frame = JSON.parse(raw) as { type: string; data: { message: { content: string } } }
    if (frame.type !== 'message.new') return
    const content = frame.data.message.content
    const i = Number(content.slice(content.lastIndexOf('#') + 1))
    received++
    if (sentAt[i] >= measureFrom) latencies.push(now - sentAt[i])
  }
  const sockets = await Promise.all(spec.pairs.map((pair) => connect(spec.port, pair.receiverToken, onFrame)))

  const host = `127.0.0.1:${spec.port}`
  const requests = spec.pairs.map((pair) => ({ authorization: `Bearer ${pair.senderToken}`, chatId: pair.chatId }))
  measureFrom = performance.now() + spec.warmupMs
  const http = await openLoop({
    ...spec,
    request: (i) => {
      const { authorization, chatId } = requests[i % requests.length]
      return encodeRequest(host, {
        method: 'POST',
        path: `${V2}/messages/send`,
        headers: { authorization },
        body: { chat_id: chatId, content: `${MESSAGE_TEXT} #${i}` },
      })
    },
    onSent: (i, at) => (sentAt[i] = at),
  })
  if (http.errors > 0) throw new Error(`${http.errors} sends failed; first: ${http.firstError}`)
  const deadline = performance.now() + GRACE_MS
  while (received < sentAt.length && performance.now() < deadline) await sleep(20)
  for (const socket of sockets) socket.terminate()
  return {
    sent: http.completed,
    missing: sentAt.length - received,
    sendRate: http.throughput,
    latency: summarizeLatencies(latencies),
    cpu: http.cpu,
  }
})
