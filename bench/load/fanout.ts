/**
 * Load process for channel-fanout: holds one WebSocket per subscriber, then the owner publishes
 * posts one at a time; each `message.new` frame is matched to its post by the `#<i>` that ends its
 * content. Latency runs from writing the post's HTTP request to each subscriber's frame.
 */
import WebSocket from 'ws'
import { MESSAGE_TEXT, V2 } from '../lib/api.js'
import { sleep } from '../lib/processes.js'
import { summarizeLatencies, type LatencySummary } from '../lib/stats.js'
import { serve } from './ipc.js'

export interface FanoutSpec {
  port: number
  ownerToken: string
  channelId: number
  subscriberTokens: string[]
  posts: number
  gapMs: number
}

export interface FanoutResult {
  sockets: number
  /** post × subscriber frames expected but not received */
  missing: number
  latency: LatencySummary
  /** per post: the time until its last subscriber had it */
  lastReceipt: LatencySummary
}

const GRACE_MS = 5000
const CONNECT_BATCH = 100

function connect(port: number, token: string, onFrame: (raw: string) => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}${V2}/ws`, {
      headers: { authorization: `Bearer ${token}` },
      perMessageDeflate: false,
    })
    socket.once('error', reject)
    socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)))
    socket.once('message', (raw) => {
      if (!String(raw).includes('"ready"')) return reject(new Error(`first frame is not ready: ${String(raw).slice(0, 200)}`))
      socket.on('message', (frame) => onFrame(String(frame)))
      resolve(socket)
    })
  })
}

serve(async (spec: FanoutSpec): Promise<FanoutResult> => {
  const sentAt: number[] = []
  const latencies: number[] = []
  const last: number[] = []
  let received = 0
  const onFrame = (raw: string) => {
    const now = performance.now()
    if (!raw.startsWith('{"type":"message.new"')) return
    const frame = JSON.parse(raw) as { data: { message: { content: string } } }
    const content = frame.data.message.content
    const i = Number(content.slice(content.lastIndexOf('#') + 1))
    received++
    latencies.push(now - sentAt[i])
    last[i] = Math.max(last[i] ?? 0, now - sentAt[i])
  }
  const sockets: WebSocket[] = []
  for (let i = 0; i < spec.subscriberTokens.length; i += CONNECT_BATCH) {
    const batch = spec.subscriberTokens.slice(i, i + CONNECT_BATCH)
    sockets.push(...(await Promise.all(batch.map((token) => connect(spec.port, token, onFrame)))))
  }

  for (let i = 0; i < spec.posts; i++) {
    sentAt[i] = performance.now()
    const response = await fetch(`http://127.0.0.1:${spec.port}${V2}/messages/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${spec.ownerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: spec.channelId, content: `${MESSAGE_TEXT} #${i}` }),
    })
    if (!response.ok) throw new Error(`post ${i} failed: ${response.status} ${await response.text()}`)
    await sleep(spec.gapMs)
  }
  const expected = spec.posts * sockets.length
  const deadline = performance.now() + GRACE_MS
  while (received < expected && performance.now() < deadline) await sleep(20)
  for (const socket of sockets) socket.terminate()
  return {
    sockets: sockets.length,
    missing: expected - received,
    latency: summarizeLatencies(latencies),
    lastReceipt: summarizeLatencies(last.filter((v) => v !== undefined)),
  }
})
