/**
 * history-depth: one chat of 1,000,000 messages; a 50-message history page at the newest end
 * (depth 0) against one at the oldest end (depth 1,000,000), both as `page`/`per_page` and as a
 * `before_id` keyset. Pages seek on (chat_id, seq), so depth should cost (almost) nothing.
 */
import { MESSAGE_TEXT, openChat, registerMany, sendMessage, V2 } from '../lib/api.js'
import type { RequestSpec } from '../lib/http-client.js'
import { runLoad } from '../lib/load.js'
import type { LoadResult } from '../lib/load-engine.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { checkLoad, fmt, type Scenario } from '../lib/scenario.js'
import { fillHistory, openTernDb } from '../lib/seed.js'
import { startServer } from '../lib/server.js'

const DEPTH = 1_000_000
const PAGE = 50

export const historyDepth: Scenario = {
  name: 'history-depth',
  summary: `chat/history page at depth 0 vs depth ${fmt(DEPTH)} (page and before_id keyset), p50 and ratio`,
  async run(ctx) {
    const dataDir = makeDataDir('history')
    let server = await startServer(ctx.machine, 'tern', dataDir)
    try {
      const [alice, bob] = await registerMany(server.url, 'hist', 2)
      const chatId = await openChat(server.url, alice, bob)
      await sendMessage(server.url, alice, chatId, MESSAGE_TEXT)
      await server.stop()

      const seeding = Date.now()
      const db = openTernDb(dataDir)
      const ids = fillHistory(db, chatId, DEPTH, [DEPTH, PAGE + 1])
      db.close()
      ctx.log(`  seeded ${fmt(DEPTH)} messages in ${fmt((Date.now() - seeding) / 1000, 1)} s`)
      server = await startServer(ctx.machine, 'tern', dataDir)

      const history = (query: string): RequestSpec => ({
        method: 'GET',
        path: `${V2}/chat/history?chat_id=${chatId}&${query}`,
        headers: { authorization: `Bearer ${alice.token}` },
      })
      const figures = {
        pageNewest: history(`page=1&per_page=${PAGE}`),
        pageOldest: history(`page=${DEPTH / PAGE}&per_page=${PAGE}`),
        keysetNewest: history(`before_id=${ids.get(DEPTH)}&limit=${PAGE}`),
        keysetOldest: history(`before_id=${ids.get(PAGE + 1)}&limit=${PAGE}`),
      }
      const p50 = Object.fromEntries(Object.keys(figures).map((key) => [key, [] as number[]])) as Record<keyof typeof figures, number[]>
      // One request at a time: the figure is the service time of one page, not a queue.
      const windowMs = Math.max(2000, ctx.durationMs / 2)
      for (let run = 1; run <= ctx.runs; run++) {
        for (const [key, request] of Object.entries(figures) as [keyof typeof figures, RequestSpec][]) {
          const result = await runLoad<LoadResult>(ctx.machine, 'http', {
            mode: 'closed',
            port: server.port,
            connections: 1,
            warmupMs: Math.min(1000, ctx.warmupMs),
            durationMs: windowMs,
            requests: [request],
          })
          p50[key].push(checkLoad(ctx, key, result).latency.p50)
        }
        ctx.log(
          `  run ${run}: ${Object.entries(p50)
            .map(([key, values]) => `${key} ${fmt(values.at(-1)!, 2)} ms`)
            .join(', ')}`,
        )
      }

      const scenario = this.name
      const ratio = (deep: number[], shallow: number[]) => deep.map((value, i) => value / shallow[i])
      return [
        { scenario, figure: `page 1 (depth 0), p50`, unit: 'ms', samples: p50.pageNewest },
        { scenario, figure: `page ${fmt(DEPTH / PAGE)} (depth ${fmt(DEPTH)}), p50`, unit: 'ms', samples: p50.pageOldest },
        { scenario, figure: 'page: deep / shallow', unit: 'x', samples: ratio(p50.pageOldest, p50.pageNewest), target: { max: 1.5 } },
        { scenario, figure: 'before_id newest (depth 0), p50', unit: 'ms', samples: p50.keysetNewest },
        { scenario, figure: `before_id oldest (depth ${fmt(DEPTH)}), p50`, unit: 'ms', samples: p50.keysetOldest },
        {
          scenario,
          figure: 'before_id: deep / shallow',
          unit: 'x',
          samples: ratio(p50.keysetOldest, p50.keysetNewest),
          target: { max: 1.5 },
        },
      ] satisfies Row[]
    } finally {
      await server.stop()
      removeDataDir(dataDir)
    }
  },
}
