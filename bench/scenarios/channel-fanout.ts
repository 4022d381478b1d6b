/**
 * channel-fanout: a channel post reaching 5,000 connected subscribers (WebSocket clients in the
 * load process): the time from the post's request to each subscriber's `message.new` frame.
 */
import { registerMany } from '../lib/api.js'
import { runLoad } from '../lib/load.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, type Scenario } from '../lib/scenario.js'
import { insertCommunity, insertSessions, insertUsers, openTernDb } from '../lib/seed.js'
import { startServer } from '../lib/server.js'
import type { FanoutResult, FanoutSpec } from '../load/fanout.js'

const SUBSCRIBERS = 5000
const POSTS = 20
const GAP_MS = 500

export const channelFanout: Scenario = {
  name: 'channel-fanout',
  summary: `a channel post reaching ${fmt(SUBSCRIBERS)} connected subscribers, p50/p99`,
  async run(ctx) {
    const dataDir = makeDataDir('channel-fanout')
    let server = await startServer(ctx.machine, 'tern', dataDir)
    try {
      const [owner, template] = await registerMany(server.url, 'fan', 2)
      await server.stop()
      const db = openTernDb(dataDir)
      const subscribers = insertUsers(db, 'fansub', SUBSCRIBERS, template.id)
      const tokens = insertSessions(db, subscribers)
      const channelId = insertCommunity(db, 'channel', 'Fan-out channel', owner.id, subscribers)
      db.close()
      server = await startServer(ctx.machine, 'tern', dataDir)

      const p50: number[] = []
      const p99: number[] = []
      const lastP99: number[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        const result = await runLoad<FanoutResult>(ctx.machine, 'fanout', {
          port: server.port,
          ownerToken: owner.token,
          channelId,
          subscriberTokens: tokens,
          posts: POSTS,
          gapMs: GAP_MS,
        } satisfies FanoutSpec)
        if (result.missing > 0) throw new Error(`${result.missing} post frames never reached their subscriber`)
        p50.push(result.latency.p50)
        p99.push(result.latency.p99)
        lastP99.push(result.lastReceipt.max)
        ctx.log(
          `  run ${run}: ${fmt(result.sockets)} sockets × ${POSTS} posts, p50 ${fmt(result.latency.p50, 1)} ms, p99 ${fmt(result.latency.p99, 1)} ms, slowest post complete after ${fmt(result.lastReceipt.max, 1)} ms`,
        )
      }
      const scenario = this.name
      return [
        { scenario, figure: `post → ${fmt(SUBSCRIBERS)} subscribers' frames, p50`, unit: 'ms', samples: p50 },
        { scenario, figure: `post → ${fmt(SUBSCRIBERS)} subscribers' frames, p99`, unit: 'ms', samples: p99, target: { max: 500 } },
        { scenario, figure: `post → last of ${fmt(SUBSCRIBERS)} subscribers (worst post)`, unit: 'ms', samples: lastP99 },
      ] satisfies Row[]
    } finally {
      await server.stop()
      removeDataDir(dataDir)
    }
  },
}
