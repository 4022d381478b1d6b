/**
 * channels: what a channel's size costs. A post (POST V2/messages/send) to a channel with 100,000
 * subscribers against one with 10, and GET V2/channels/subscribers at the last page against the
 * first, one request at a time (service time, not a queue). Subscribers are seeded straight into
 * the database (100,000 registrations through argon2 would take an hour).
 */
import { MESSAGE_TEXT, registerMany, V2 } from '../lib/api.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, serviceTime, type BenchContext, type Scenario } from '../lib/scenario.js'
import { insertCommunity, insertUsers, openTernDb } from '../lib/seed.js'
import { startServer, type Server } from '../lib/server.js'

const BIG = 100_000
const SMALL = 10
const PER_PAGE = 20

function latency(
  ctx: BenchContext,
  server: Server,
  label: string,
  request: { method: 'GET' | 'POST'; path: string; token: string; body?: unknown },
) {
  return serviceTime(ctx, server.port, label, [
    {
      method: request.method,
      path: request.path,
      headers: { authorization: `Bearer ${request.token}` },
      ...(request.body ? { body: request.body } : {}),
    },
  ])
}

export const channels: Scenario = {
  name: 'channels',
  summary: `post to a channel of ${fmt(BIG)} vs ${fmt(SMALL)} subscribers; subscribers page ${fmt(BIG / PER_PAGE)} vs page 1`,
  async run(ctx) {
    const dataDir = makeDataDir('channels')
    let server = await startServer(ctx.machine, 'tern', dataDir)
    try {
      const [owner, template] = await registerMany(server.url, 'chan', 2)
      await server.stop()
      const db = openTernDb(dataDir)
      const subscribers = insertUsers(db, 'sub', BIG - 1, template.id)
      const big = insertCommunity(db, 'channel', 'Big channel', owner.id, subscribers)
      const small = insertCommunity(db, 'channel', 'Small channel', owner.id, subscribers.slice(0, SMALL - 1))
      db.close()
      server = await startServer(ctx.machine, 'tern', dataDir)

      const post = (chatId: number) => ({
        method: 'POST' as const,
        path: `${V2}/messages/send`,
        token: owner.token,
        body: { chat_id: chatId, content: MESSAGE_TEXT },
      })
      const page = (n: number) => ({
        method: 'GET' as const,
        path: `${V2}/channels/subscribers?channel_id=${big}&page=${n}&per_page=${PER_PAGE}`,
        token: owner.token,
      })
      const lastPage = BIG / PER_PAGE
      const samples = {
        smallPost: [] as number[],
        bigPost: [] as number[],
        postRatio: [] as number[],
        first: [] as number[],
        last: [] as number[],
        pageRatio: [] as number[],
      }
      for (let run = 1; run <= ctx.runs; run++) {
        const smallPost = (await latency(ctx, server, 'post to the small channel', post(small))).latency.p50
        const bigPost = (await latency(ctx, server, 'post to the big channel', post(big))).latency.p50
        const first = (await latency(ctx, server, 'subscribers page 1', page(1))).latency.p50
        const last = (await latency(ctx, server, `subscribers page ${lastPage}`, page(lastPage))).latency.p50
        samples.smallPost.push(smallPost)
        samples.bigPost.push(bigPost)
        samples.postRatio.push(bigPost / smallPost)
        samples.first.push(first)
        samples.last.push(last)
        samples.pageRatio.push(last / first)
        ctx.log(
          `  run ${run}: post p50 ${fmt(smallPost, 2)} ms (${SMALL}) vs ${fmt(bigPost, 2)} ms (${fmt(BIG)}); subscribers page 1 ${fmt(first, 2)} ms vs page ${fmt(lastPage)} ${fmt(last, 2)} ms`,
        )
      }
      const scenario = this.name
      return [
        { scenario, figure: `post p50, channel of ${fmt(SMALL)} subscribers`, unit: 'ms', samples: samples.smallPost },
        { scenario, figure: `post p50, channel of ${fmt(BIG)} subscribers`, unit: 'ms', samples: samples.bigPost },
        { scenario, figure: `post: ${fmt(BIG)} / ${fmt(SMALL)} subscribers`, unit: 'x', samples: samples.postRatio, target: { max: 1.5 } },
        { scenario, figure: `subscribers page 1 p50 (${fmt(BIG)} subscribers)`, unit: 'ms', samples: samples.first },
        { scenario, figure: `subscribers page ${fmt(lastPage)} p50`, unit: 'ms', samples: samples.last },
        { scenario, figure: `subscribers: last page / page 1`, unit: 'x', samples: samples.pageRatio, target: { max: 1.5 } },
      ] satisfies Row[]
    } finally {
      await server.stop()
      removeDataDir(dataDir)
    }
  },
}
