/**
 * stories: (1) GET V2/stories/feed for a user with 2,000 contacts, 500 of whom have an active
 * story, with 1,000,000 active stories in the table (the rest by people the user does not
 * follow); (2) the cleanup job removing 100,000 expired stories (with views, uploads and 10,000
 * files on disk) while sends run at a steady rate: the sends' p99 during the cleanup shows how
 * long the job ever holds the event loop.
 */
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { registerMany, sendRequests, V2 } from '../lib/api.js'
import type { RequestSpec } from '../lib/http-client.js'
import { runLoad } from '../lib/load.js'
import type { LoadResult } from '../lib/load-engine.js'
import { makeDataDir, removeDataDir, sleep } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { checkLoad, fmt, serviceTime, type BenchContext, type Scenario } from '../lib/scenario.js'
import { insertContacts, insertStories, insertUsers, openTernDb, type SeedDb, type SeedStory } from '../lib/seed.js'
import { startServer } from '../lib/server.js'

const DAY = 86_400_000
const CONTACTS = 2000
const WITH_STORIES = 500
const TABLE = 1_000_000
const OTHERS = 10_000

const EXPIRED = 100_000
const FILES = 10_000
/**
 * when the seeded stories expire, and when the job's second run comes, after the server started
 * (its third comes after the measured window, so job_runs keeps the second's duration)
 */
const EXPIRE_AFTER_MS = 10_000
const CLEANUP_INTERVAL_S = 30
/** steady send rate while the job runs (a fraction of send-throughput's maximum) */
const SEND_RATE = 1000
const PAIRS = 16

export const stories: Scenario = {
  name: 'stories',
  summary: `story feed p50 (${fmt(CONTACTS)} contacts, ${fmt(WITH_STORIES)} with stories, ${fmt(TABLE)} stories); send p99 while ${fmt(EXPIRED)} expired stories are cleaned up`,
  async run(ctx) {
    return [...(await feed(ctx, this.name)), ...(await cleanup(ctx, this.name))]
  },
}

async function feed(ctx: BenchContext, scenario: string): Promise<Row[]> {
  const dataDir = makeDataDir('stories-feed')
  let server = await startServer(ctx.machine, 'tern', dataDir)
  try {
    const [viewer, template] = await registerMany(server.url, 'feed', 2)
    await server.stop()
    const seeding = Date.now()
    const db = openTernDb(dataDir)
    const contacts = insertUsers(db, 'contact', CONTACTS, template.id)
    const others = insertUsers(db, 'other', OTHERS, template.id)
    insertContacts(db, viewer.id, contacts)
    const now = Date.now()
    // The table as the cleanup job keeps it: active stories only (expired ones live at most one
    // cleanup period, and the job's run at start would remove seeded ones during the measurement).
    function* rows(): Generator<SeedStory> {
      // one per contact for the first 500, posted over the last 23 hours
      for (let i = 0; i < WITH_STORIES; i++) yield { userId: contacts[i], createdAt: now - Math.floor((i / WITH_STORIES) * 23 * 3_600_000) }
      // the rest of the table: people the viewer does not follow
      const rest = TABLE - WITH_STORIES
      for (let i = 0; i < rest; i++) yield { userId: others[i % OTHERS], createdAt: now - Math.floor((i / rest) * 23 * 3_600_000) }
    }
    insertStories(db, rows())
    db.close()
    ctx.log(`  seeded ${fmt(TABLE)} stories in ${fmt((Date.now() - seeding) / 1000, 1)} s`)
    server = await startServer(ctx.machine, 'tern', dataDir)

    const request: RequestSpec = { method: 'GET', path: `${V2}/stories/feed`, headers: { authorization: `Bearer ${viewer.token}` } }
    const check = await fetch(`${server.url}${request.path}`, { headers: request.headers })
    const shown = ((await check.json()) as { items: unknown[] }).items.length
    if (shown !== WITH_STORIES) throw new Error(`the feed shows ${shown} stories, expected ${WITH_STORIES}`)
    const p50: number[] = []
    const p99: number[] = []
    for (let run = 1; run <= ctx.runs; run++) {
      const result = await serviceTime(ctx, server.port, 'stories/feed', [request])
      p50.push(result.latency.p50)
      p99.push(result.latency.p99)
      ctx.log(`  feed run ${run}: p50 ${fmt(result.latency.p50, 2)} ms, p99 ${fmt(result.latency.p99, 2)} ms`)
    }
    return [
      {
        scenario,
        figure: `feed, ${fmt(WITH_STORIES)} of ${fmt(CONTACTS)} contacts with stories, ${fmt(TABLE)} in table, p50`,
        unit: 'ms',
        samples: p50,
        target: { max: 20 },
      },
      { scenario, figure: 'feed, same, p99', unit: 'ms', samples: p99 },
    ]
  } finally {
    await server.stop()
    removeDataDir(dataDir)
  }
}

/**
 * 10,000 stored files (1 KiB each, on disk), 100,000 uploads of them (ten each) by `ownerId`, and
 * a story on each upload that expires at `expiresAt`, viewed by two users.
 */
function seedExpired(db: SeedDb, dataDir: string, ownerId: number, viewers: number[], expiresAt: number) {
  const object = db.prepare(
    "insert into file_objects (hash, storage_key, size, mime_type, ext, file_type, preview_size, created_at) values (?, ?, 1024, 'image/png', 'png', 'image', 'none', ?)",
  )
  const upload = db.prepare(
    "insert into file_uploads (owner_id, hash, path, original_name, size, mime_type, created_at) values (?, ?, ?, 'seed.png', 1024, 'image/png', ?)",
  )
  const view = db.prepare('insert into story_views (story_id, viewer_id, viewed_at) values (?, ?, ?)')
  const now = Date.now()
  const paths: string[] = []
  db.transaction(() => {
    for (let f = 0; f < FILES; f++) {
      const bytes = randomBytes(1024)
      const hash = createHash('sha256').update(bytes).digest('hex')
      const key = `objects/${hash.slice(0, 2)}/${hash}`
      const file = path.join(dataDir, 'uploads', key)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, bytes)
      object.run(hash, key, now)
      for (let u = 0; u < EXPIRED / FILES; u++) {
        const uploadPath = `${randomBytes(16).toString('base64url')}.png`
        upload.run(ownerId, hash, uploadPath, now)
        paths.push(uploadPath)
      }
    }
  })()
  const ids = insertStories(
    db,
    paths.map((mediaPath) => ({ userId: ownerId, createdAt: expiresAt - DAY, expiresAt, mediaPath })),
  )
  db.transaction(() => {
    for (const id of ids) for (const viewer of viewers) view.run(id, viewer, now)
  })()
}

async function cleanup(ctx: BenchContext, scenario: string): Promise<Row[]> {
  const p99Before: number[] = []
  const p99During: number[] = []
  const maxDuring: number[] = []
  const durations: number[] = []
  for (let run = 1; run <= ctx.runs; run++) {
    const dataDir = makeDataDir('stories-cleanup')
    const env = { STORY_CLEANUP_INTERVAL_SECONDS: String(CLEANUP_INTERVAL_S) }
    let server = await startServer(ctx.machine, 'tern', dataDir, { env })
    try {
      const users = await registerMany(server.url, 'clean', PAIRS * 2 + 1)
      const owner = users.pop()!
      const requests = await sendRequests(server.url, users, PAIRS)
      await server.stop()
      const db = openTernDb(dataDir)
      const seeding = Date.now()
      // they expire a little after the server starts: its run at start finds nothing, the next removes them all
      seedExpired(db, dataDir, owner.id, [users[0].id, users[1].id], Date.now() + EXPIRE_AFTER_MS + 5000)
      db.close()
      ctx.log(`  cleanup run ${run}: seeded ${fmt(EXPIRED)} stories and ${fmt(FILES)} files in ${fmt((Date.now() - seeding) / 1000, 1)} s`)
      const started = Date.now()
      server = await startServer(ctx.machine, 'tern', dataDir, { env })
      const load = (durationMs: number) =>
        runLoad<LoadResult>(ctx.machine, 'http', {
          mode: 'open',
          rate: SEND_RATE,
          connections: 64,
          port: server.port,
          warmupMs: 1000,
          durationMs,
          requests,
        })
      // before: sends alone; during: from just before the job's second run until well after it
      const before = checkLoad(ctx, 'sends before the cleanup', await load(8000))
      const untilRun = started + CLEANUP_INTERVAL_S * 1000 - 1500 - Date.now()
      if (untilRun > 0) await sleep(untilRun)
      const during = checkLoad(ctx, 'sends during the cleanup', await load(20_000))
      await server.stop()

      const check = openTernDb(dataDir)
      const left = check.prepare('select count(*) from stories').pluck().get() as number
      const job = check
        .prepare("select last_started_at, last_duration_ms from job_runs where name = 'story-cleanup' order by last_started_at desc")
        .get() as { last_started_at: number; last_duration_ms: number } | undefined
      const objects = path.join(dataDir, 'uploads', 'objects')
      const filesLeft = fs.existsSync(objects)
        ? (fs.readdirSync(objects, { recursive: true }) as string[]).filter((name) => /[0-9a-f]{64}$/.test(name)).length
        : 0
      check.close()
      if (left !== 0 || !job) throw new Error(`the cleanup did not finish within the window: ${left} stories left`)
      p99Before.push(before.latency.p99)
      p99During.push(during.latency.p99)
      maxDuring.push(during.latency.max)
      durations.push(job.last_duration_ms)
      ctx.log(
        `  cleanup run ${run}: removed in ${fmt(job.last_duration_ms)} ms (${filesLeft} of ${fmt(FILES)} files left on disk); sends p99 ${fmt(before.latency.p99, 2)} ms before, ` +
          `${fmt(during.latency.p99, 2)} ms during (max ${fmt(during.latency.max, 1)} ms)`,
      )
    } finally {
      await server.stop()
      removeDataDir(dataDir)
    }
  }
  return [
    { scenario, figure: `cleanup of ${fmt(EXPIRED)} expired stories (${fmt(FILES)} files), duration`, unit: 'ms', samples: durations },
    { scenario, figure: `send p99 at ${fmt(SEND_RATE)} req/s, no cleanup (reference)`, unit: 'ms', samples: p99Before },
    { scenario, figure: `send p99 at ${fmt(SEND_RATE)} req/s during the cleanup`, unit: 'ms', samples: p99During, target: { max: 50 } },
    { scenario, figure: `send max at ${fmt(SEND_RATE)} req/s during the cleanup`, unit: 'ms', samples: maxDuring },
  ]
}
