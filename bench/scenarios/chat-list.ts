/** chat-list: GET V2/chat_list (first page of 20) for a user with 5,000 personal chats. */
import { MESSAGE_TEXT, openChat, registerMany, sendMessage, V2 } from '../lib/api.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, serviceTime, type Scenario } from '../lib/scenario.js'
import { insertPersonalChats, insertUsers, openTernDb } from '../lib/seed.js'
import { startServer } from '../lib/server.js'

const CHATS = 5000

export const chatList: Scenario = {
  name: 'chat-list',
  summary: `chat_list page 1 for a user with ${fmt(CHATS)} chats, p50/p99`,
  async run(ctx) {
    const dataDir = makeDataDir('chat-list')
    let server = await startServer(ctx.machine, 'tern', dataDir)
    try {
      // One chat made through the API; the other 4,999 seeded alongside it.
      const [owner, peer] = await registerMany(server.url, 'list', 2)
      await sendMessage(server.url, owner, await openChat(server.url, owner, peer), MESSAGE_TEXT)
      await server.stop()
      const db = openTernDb(dataDir)
      insertPersonalChats(db, owner.id, insertUsers(db, 'peer', CHATS - 1, peer.id))
      db.close()
      server = await startServer(ctx.machine, 'tern', dataDir)

      const p50: number[] = []
      const p99: number[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        const result = await serviceTime(ctx, server.port, 'chat_list', [
          { method: 'GET', path: `${V2}/chat_list?page=1&per_page=20`, headers: { authorization: `Bearer ${owner.token}` } },
        ])
        p50.push(result.latency.p50)
        p99.push(result.latency.p99)
        ctx.log(`  run ${run}: p50 ${fmt(result.latency.p50, 2)} ms, p99 ${fmt(result.latency.p99, 2)} ms`)
      }
      const scenario = this.name
      return [
        { scenario, figure: `${fmt(CHATS)} chats, page 1 of 20, p50`, unit: 'ms', samples: p50, target: { max: 15 } },
        { scenario, figure: `${fmt(CHATS)} chats, page 1 of 20, p99`, unit: 'ms', samples: p99 },
      ] satisfies Row[]
    } finally {
      await server.stop()
      removeDataDir(dataDir)
    }
  },
}
