/**
 * Load process: HTTP load against one server, closed loop (maximum throughput) or open loop (a
 * fixed rate). Requests cycle through `requests`, so several users and chats share the load.
 */
import { encodeRequest, type RequestSpec } from '../lib/http-client.js'
import { closedLoop, openLoop, type LoadResult } from '../lib/load-engine.js'
import { serve } from './ipc.js'

export interface HttpLoadSpec {
  mode: 'closed' | 'open'
  port: number
  connections: number
  warmupMs: number
  durationMs: number
  /** open loop only: requests per second */
  rate?: number
  requests: RequestSpec[]
  /** the server's process, for its CPU time per request (LoadResult.server) */
  serverPid?: number
}

serve(async (spec: HttpLoadSpec): Promise<LoadResult> => {
  const encoded = spec.requests.map((request) => encodeRequest(`127.0.0.1:${spec.port}`, request))
  const options = { ...spec, request: (i: number) => encoded[i % encoded.length] }
  if (spec.mode === 'closed') return closedLoop(options)
  if (!spec.rate) throw new Error('open loop needs a rate')
  return openLoop({ ...options, rate: spec.rate })
})
