/**
 * Load process for idle-ws: opens many WebSockets from several loopback source addresses (one
 * address has only ~28,000 ephemeral ports), each authenticated when tokens are given, waits for
 * every first frame and then holds them idle until the orchestrator disconnects.
 */
import WebSocket from 'ws'
import { serve } from './ipc.js'

export interface IdleWsSpec {
  url: string
  count: number
  /** one bearer token per connection, or none for the bare ws baseline */
  tokens?: string[]
  localAddresses: string[]
  /** connection attempts in flight at once */
  concurrency: number
}

const sockets: WebSocket[] = []

function open(spec: IdleWsSpec, i: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const token = spec.tokens?.[i]
    const socket = new WebSocket(spec.url, {
      localAddress: spec.localAddresses[i % spec.localAddresses.length],
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    })
    socket.once('error', reject)
    socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)))
    // The first frame (`ready`) means the server has set the connection up completely.
    socket.once('message', () => resolve())
    sockets.push(socket)
  })
}

/** Resolves once every connection is open and has had its first frame. */
serve(async (spec: IdleWsSpec): Promise<number> => {
  let next = 0
  const worker = async () => {
    while (next < spec.count) await open(spec, next++)
  }
  await Promise.all(Array.from({ length: Math.min(spec.concurrency, spec.count) }, worker))
  return sockets.length
})
