/**
 * ws-latency: the time from sending a message (POST V2/messages/send) to its receiver's WebSocket
 * getting the `message.new` frame, at a steady 1,000 messages/s over several chats.
 */
import { openChat, registerMany } from '../lib/api.js'
import { runLoad } from '../lib/load.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, type Scenario } from '../lib/scenario.js'
import { startServer } from '../lib/server.js'
import type { WsLatencyResult, WsLatencySpec } from '../load/ws-latency.js'

const RATE = 1000
/** sender → receiver pairs; each receiver holds one socket */
const PAIRS = 10
const POOL = 32

export const wsLatency: Scenario = {
  name: 'ws-latency',
  summary: `send → receiver's WebSocket frame, p50/p99 at ${fmt(RATE)} messages/s`,
  async run(ctx) {
    const dataDir = makeDataDir('ws-latency')
    const server = await startServer(ctx.machine, 'tern', dataDir)
    try {
      const users = await registerMany(server.url, 'wsl', PAIRS * 2)
      const pairs: WsLatencySpec['pairs'] = []
      for (let i = 0; i < PAIRS; i++) {
        const [sender, receiver] = [users[2 * i], users[2 * i + 1]]
        pairs.push({ senderToken: sender.token, chatId: await openChat(server.url, sender, receiver), receiverToken: receiver.token })
      }
      const p50: number[] = []
      const p99: number[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        const result = await runLoad<WsLatencyResult>(ctx.machine, 'ws-latency', {
          port: server.port,
          rate: RATE,
          connections: POOL,
          warmupMs: ctx.warmupMs,
          durationMs: ctx.durationMs,
          pairs,
        } satisfies WsLatencySpec)
        if (result.missing > 0) throw new Error(`${result.missing} messages never reached the receiver's socket`)
        if (result.sendRate < RATE * 0.95) ctx.log(`  warning: only ${fmt(result.sendRate)} of ${fmt(RATE)} messages/s were sent`)
        p50.push(result.latency.p50)
        p99.push(result.latency.p99)
        ctx.log(
          `  run ${run}: ${fmt(result.sent)} messages, p50 ${fmt(result.latency.p50, 2)} ms, p99 ${fmt(result.latency.p99, 2)} ms, max ${fmt(result.latency.max, 1)} ms`,
        )
      }
      const scenario = this.name
      return [
        { scenario, figure: `send → WS receipt p50 at ${fmt(RATE)} msg/s`, unit: 'ms', samples: p50, target: { max: 3 } },
        { scenario, figure: `send → WS receipt p99 at ${fmt(RATE)} msg/s`, unit: 'ms', samples: p99, target: { max: 15 } },
      ] satisfies Row[]
    } finally {
      await server.stop()
      removeDataDir(dataDir)
    }
  },
}
