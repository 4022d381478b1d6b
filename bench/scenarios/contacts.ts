/** contacts: GET V2/contacts (page 1 of 20, by name) for a user with 5,000 contacts, one request at a time. */
import { registerMany, V2 } from '../lib/api.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, serviceTime, type Scenario } from '../lib/scenario.js'
import { insertContacts, insertUsers, openTernDb } from '../lib/seed.js'
import { startServer } from '../lib/server.js'

const CONTACTS = 5000

export const contacts: Scenario = {
  name: 'contacts',
  summary: `contacts page 1 for a user with ${fmt(CONTACTS)} contacts, p50/p99 (p50 target 10 ms)`,
  async run(ctx) {
    const dataDir = makeDataDir('contacts')
    let server = await startServer(ctx.machine, 'tern', dataDir)
    try {
      const [owner] = await registerMany(server.url, 'keeper', 1)
      await server.stop()
      const db = openTernDb(dataDir)
      const people = insertUsers(db, 'friend', CONTACTS, owner.id)
      insertContacts(db, owner.id, people)
      // a tenth keep the owner among their contacts and show their last seen to contacts only, so
      // the page pays for the privacy check too
      db.prepare(`update users set privacy_last_seen = 'contacts' where id in (${people.filter((_, i) => i % 10 === 0).join(',')})`).run()
      insertContactsBack(
        db,
        owner.id,
        people.filter((_, i) => i % 10 === 0),
      )
      db.close()
      server = await startServer(ctx.machine, 'tern', dataDir)

      const p50: number[] = []
      const p99: number[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        const result = await serviceTime(ctx, server.port, 'contacts', [
          { method: 'GET', path: `${V2}/contacts?page=1&per_page=20`, headers: { authorization: `Bearer ${owner.token}` } },
        ])
        p50.push(result.latency.p50)
        p99.push(result.latency.p99)
        ctx.log(`  run ${run}: p50 ${fmt(result.latency.p50, 2)} ms, p99 ${fmt(result.latency.p99, 2)} ms`)
      }
      const scenario = this.name
      return [
        { scenario, figure: `${fmt(CONTACTS)} contacts, page 1 of 20, p50`, unit: 'ms', samples: p50, target: { max: 10 } },
        { scenario, figure: `${fmt(CONTACTS)} contacts, page 1 of 20, p99`, unit: 'ms', samples: p99 },
      ] satisfies Row[]
    } finally {
      await server.stop()
      removeDataDir(dataDir)
    }
  },
}

function insertContactsBack(db: ReturnType<typeof openTernDb>, ownerId: number, keepers: number[]) {
  for (const keeper of keepers) insertContacts(db, keeper, [ownerId])
}
