/**
 * Load process for video-signaling: opens ROOMS × PEERS signaling sockets (each joins its room
 * with a ticket signed here with the bench's video secret), then sends offers at a fixed total
 * rate (open loop), each from one peer of a room to the next one; latency runs from writing the
 * offer frame to receiving the relayed offer on the other socket (one process, one clock).
 */
import WebSocket from 'ws'
import { signTicket } from '../../src/video/ticket.js'
import { summarizeLatencies, type LatencySummary } from '../lib/stats.js'
import { serve } from './ipc.js'

export interface VideoSignalingSpec {
  url: string
  /** the video secret (VIDEO_SECRET) */
  secret: string
  rooms: number
  peers: number
  /** 'connect' only: the rooms [fromRoom, toRoom) to fill (default all) */
  fromRoom?: number
  toRoom?: number
  /** 'connect': open and join every socket; 'offers': send offers at `rate` for `durationMs` (after `warmupMs`) */
  step: 'connect' | 'offers'
  rate?: number
  warmupMs?: number
  durationMs?: number
  /** bytes of each offer's SDP */
  sdpBytes?: number
}

export interface VideoSignalingResult {
  joined?: number
  sent?: number
  missing?: number
  latency?: LatencySummary
}

interface Peer {
  ws: WebSocket
  id: string
  room: number
}

/** how long offers still in flight may take after the last send */
const GRACE_MS = 10_000

const peers: Peer[] = []
/** send time by offer number, while in flight */
const inFlight = new Map<number, number>()
let measuring = false
const latencies: number[] = []

function join(spec: VideoSignalingSpec, room: number, index: number): Promise<Peer> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${spec.url.replace(/^http/, 'ws')}/signal`, { perMessageDeflate: false })
    const timer = setTimeout(() => reject(new Error('no joined frame within 10 s')), 10_000)
    ws.once('error', reject)
    ws.once('open', () => {
      const ticket = signTicket(Buffer.from(spec.secret, 'utf8'), {
        room: `bench-${room}`,
        uid: room * 100 + index + 1,
        username: `u${room}_${index}`,
        exp: Date.now() + 600_000,
        audio_only: false,
        cb: null,
      })
      ws.send(JSON.stringify({ type: 'join', room_id: `bench-${room}`, ticket }))
    })
    ws.on('message', (raw) => {
      const text = String(raw)
      if (text.startsWith('{"type":"joined"')) {
        clearTimeout(timer)
        return resolve({ ws, id: JSON.parse(text).peer_id, room })
      }
      if (text.startsWith('{"type":"offer"')) {
        // the offer number is the SDP's first line: "v=0 <n>"
        const at = text.indexOf('v=0 ')
        const n = Number(text.slice(at + 4, text.indexOf('\\r', at)))
        const sent = inFlight.get(n)
        if (sent !== undefined) {
          inFlight.delete(n)
          if (measuring) latencies.push(performance.now() - sent)
        }
      } else if (text.startsWith('{"type":"error"')) {
        process.stderr.write(`video-signaling: ${text}\n`)
      }
    })
  })
}

serve(async (spec: VideoSignalingSpec): Promise<VideoSignalingResult> => {
  if (spec.step === 'connect') {
    for (let room = spec.fromRoom ?? 0; room < (spec.toRoom ?? spec.rooms); room++) {
      // a room's peers join one after another (the server tells the earlier ones); rooms in batches
      for (let index = 0; index < spec.peers; index++) peers.push(await join(spec, room, index))
    }
    // every peer joined so far (cumulative over connect steps)
    return { joined: peers.length }
  }
  const rate = spec.rate ?? 1000
  const body = 'a=x'.padEnd(Math.max(0, (spec.sdpBytes ?? 2000) - 16), 'x')
  let n = 0
  let sent = 0
  const start = performance.now()
  const warmEnd = start + (spec.warmupMs ?? 1000)
  const end = warmEnd + (spec.durationMs ?? 5000)
  const interval = 1000 / rate
  let next = start
  while (performance.now() < end) {
    const now = performance.now()
    measuring = now >= warmEnd
    while (next <= now) {
      const room = n % spec.rooms
      const from = peers[room * spec.peers + (n % spec.peers)]
      const to = peers[room * spec.peers + ((n + 1) % spec.peers)]
      inFlight.set(n, performance.now())
      from.ws.send(`{"type":"offer","to":"${to.id}","sdp":"v=0 ${n}\\r\\n${body}"}`)
      if (measuring) sent++
      n++
      next += interval
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  // offers still in flight may take a while on a loaded machine; they count when they arrive
  for (let waited = 0; inFlight.size > 0 && waited < GRACE_MS; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50))
  measuring = false
  const missing = inFlight.size
  inFlight.clear()
  return { sent, missing, latency: summarizeLatencies(latencies.splice(0)) }
})
