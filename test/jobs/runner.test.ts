/**
 * The jobs runner on two instances sharing one database (SQLite file or PostgreSQL): a cluster
 * job runs once per period and never on both at once, an instance job on each, a failing job
 * keeps its schedule, a stop waits for the run in progress and hands the lease over; and
 * `npm run cli -- jobs` shows what a real server's jobs did.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import test, { after } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import * as repo from '../../src/jobs/repo.js'
import { JobRunner, type Job } from '../../src/jobs/runner.js'
import { createTestDatabase, tempDir } from '../harness/database.js'
import { runNode, startTern } from '../harness/process.js'
import { startTestServer } from '../harness/server.js'

const one = await startTestServer()
const two = await startTestServer({ database: one.database })

interface Run {
  instance: string
  start: number
  end: number
}

/** A job that takes `ms` and notes when it ran, and where. */
function noting(name: string, instance: string, runs: Run[], scope: Job['scope'], everyMs: number, ms = 5): Job {
  return {
    name,
    summary: 'test job',
    scope,
    everyMs,
    run: async () => {
      const start = performance.now()
      await sleep(ms)
      runs.push({ instance, start, end: performance.now() })
    },
  }
}

function assertNoOverlap(runs: Run[]) {
  const sorted = [...runs].sort((a, b) => a.start - b.start)
  for (let i = 1; i < sorted.length; i++) {
    assert.ok(
      sorted[i].start >= sorted[i - 1].end,
      `run ${i} (${sorted[i].instance}) started before run ${i - 1} (${sorted[i - 1].instance}) ended`,
    )
  }
}

test('a cluster job runs once per period across two instances, never on both at once; a clean stop hands it over at once', async () => {
  const runs: Run[] = []
  const everyMs = 40
  const a = new JobRunner(one.ctx, { instance: 'a', leaseMs: 5000 })
  const b = new JobRunner(two.ctx, { instance: 'b', leaseMs: 5000 })
  a.define(noting('count', 'a', runs, 'cluster', everyMs))
  b.define(noting('count', 'b', runs, 'cluster', everyMs))
  await Promise.all([a.start(), b.start()])
  const began = performance.now()
  await sleep(1500)
  const elapsed = performance.now() - began
  const during = runs.length
  assertNoOverlap(runs)
  // both instances tick every 40 ms; once per period means about elapsed/40 runs in all, not twice that
  assert.ok(during >= 15, `the job ran (${during} runs)`)
  assert.ok(during <= elapsed / (everyMs * 0.9) + 2, `${during} runs in ${Math.round(elapsed)} ms: more than once per period`)
  // the holder keeps it while it lives
  const holder = runs.at(-1)!.instance
  assert.ok(
    runs.slice(1).every((run) => run.instance === holder),
    'one instance held the job',
  )

  const [stopped, other] = holder === 'a' ? [a, b] : [b, a]
  await stopped.stop()
  const handedAt = runs.length
  await sleep(500)
  const afterStop = runs.slice(handedAt)
  assert.ok(afterStop.length >= 5, `the other instance took over at once (${afterStop.length} runs in 500 ms, lease 5 s)`)
  assert.ok(
    afterStop.every((run) => run.instance !== holder),
    'nothing ran on the stopped instance',
  )
  assertNoOverlap(runs)
  await other.stop()
  const total = runs.length
  await sleep(200)
  assert.equal(runs.length, total, 'nothing runs after both stopped')
})

test('a crashed holder (it never gives the lease up) loses the job when its lease expires', async () => {
  const runs: Run[] = []
  const a = new JobRunner(one.ctx, { instance: 'crashy', leaseMs: 600 })
  a.define(noting('handover', 'crashy', runs, 'cluster', 30))
  await a.start()
  await sleep(200)
  assert.ok(runs.length > 0 && runs.every((run) => run.instance === 'crashy'), 'the first instance ran it')
  // a crash: its timers stop, its lease stays in the table until it expires
  ;(a as unknown as { abort: AbortController }).abort.abort()
  const b = new JobRunner(two.ctx, { instance: 'heir', leaseMs: 600 })
  b.define(noting('handover', 'heir', runs, 'cluster', 30))
  const crashedAt = performance.now()
  await b.start()
  await sleep(300)
  assert.equal(runs.filter((run) => run.instance === 'heir').length, 0, 'not while the lease lasts')
  await sleep(700)
  const heir = runs.filter((run) => run.instance === 'heir')
  assert.ok(heir.length >= 3, `the heir runs it once the lease expired (${heir.length} runs)`)
  assert.ok(heir[0].start - crashedAt >= 350, 'and not before')
  await b.stop()
})

test('an instance job runs on every instance', async () => {
  const runs: Run[] = []
  const a = new JobRunner(one.ctx, { instance: 'a2' })
  const b = new JobRunner(two.ctx, { instance: 'b2' })
  a.define(noting('local', 'a2', runs, 'instance', 30))
  b.define(noting('local', 'b2', runs, 'instance', 30))
  await Promise.all([a.start(), b.start()])
  await sleep(400)
  await Promise.all([a.stop(), b.stop()])
  assert.ok(runs.filter((run) => run.instance === 'a2').length >= 5)
  assert.ok(runs.filter((run) => run.instance === 'b2').length >= 5)
})

test('a failing job is counted and keeps its schedule; the jobs beside it are not held up; records reach job_runs', async () => {
  const runs: Run[] = []
  let attempts = 0
  const runner = new JobRunner(one.ctx, { instance: 'f', recordEveryMs: 100 })
  runner.define({
    name: 'fails',
    summary: 'always throws',
    scope: 'cluster',
    everyMs: 30,
    run: async () => {
      attempts++
      throw new Error(`attempt ${attempts} failed`)
    },
  })
  runner.define(noting('fine', 'f', runs, 'cluster', 30))
  await runner.start()
  await sleep(500)
  assert.ok(attempts >= 5, `the failing job was tried again and again (${attempts})`)
  assert.ok(runs.length >= 5, `the other job ran meanwhile (${runs.length})`)
  await runner.stop()
  const records = (await repo.listRuns(one.ctx.db)).filter((row) => row.instance === 'f')
  const failed = records.find((row) => row.name === 'fails')!
  assert.equal(failed.failures, attempts)
  assert.equal(failed.runs, attempts)
  assert.match(failed.last_error ?? '', /^attempt \d+ failed$/)
  const fine = records.find((row) => row.name === 'fine')!
  assert.equal(fine.failures, 0)
  assert.equal(fine.runs, runs.length)
  assert.ok(fine.last_started_at! <= fine.last_finished_at!)
})

test('stop waits for the run in progress (which sees its signal abort), and nothing starts after', async () => {
  let finished = false
  let sawAbort = false
  let started = 0
  const runner = new JobRunner(one.ctx, { instance: 's' })
  runner.define({
    name: 'slow',
    summary: 'takes 300 ms',
    scope: 'instance',
    everyMs: 20,
    run: async (signal) => {
      started++
      await sleep(300)
      sawAbort = signal.aborted
      finished = true
    },
  })
  await runner.start()
  await sleep(100)
  assert.equal(started, 1, 'the run is in progress')
  await runner.stop()
  assert.ok(finished, 'stop returned only after the run ended')
  assert.ok(sawAbort, 'the run could see that the runner is stopping')
  await sleep(100)
  assert.equal(started, 1, 'no run started after the stop')
})

test('npm run cli -- jobs lists what a real server’s jobs did', async () => {
  const dataDir = tempDir()
  const database = await createTestDatabase(dataDir)
  after(async () => {
    await database.drop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })
  const env = { DATA_DIR: dataDir, DATABASE_URL: database.url }
  const before = await runNode('src/cli/main.ts', ['jobs'], env)
  assert.equal(before.code, 0, before.stderr)
  assert.match(before.stdout, /story-cleanup\s+cluster\s+30 min\s+\(never ran\)/)
  // the work queue's jobs run when their work falls due
  assert.match(before.stdout, /scheduled-messages\s+cluster\s+when due\s+\(never ran\)/)
  const tern = await startTern(env)
  await sleep(700)
  tern.child.kill('SIGTERM')
  assert.equal(await tern.exited, 0, tern.output())
  const listed = await runNode('src/cli/main.ts', ['jobs'], env)
  assert.equal(listed.code, 0, listed.stderr)
  const line = listed.stdout.split('\n').find((l) => l.startsWith('story-cleanup'))
  assert.ok(line, listed.stdout)
  const [, scope, , instance, runs] = line.split(/\s{2,}/)
  assert.equal(scope, 'cluster')
  assert.match(instance, /:\d+:[0-9a-f]{6}$/, 'the instance is named host:pid:random')
  assert.ok(Number(runs) >= 1, `the server cleaned up stories at start (${runs} runs)`)
  assert.match(line, /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/)
  // an idle server ran no scheduled delivery, yet its record names the instance
  const queued = listed.stdout.split('\n').find((l) => l.startsWith('scheduled-messages'))
  assert.ok(queued, listed.stdout)
  assert.match(queued.split(/\s{2,}/)[3], /:\d+:[0-9a-f]{6}$/)
  assert.equal(queued.split(/\s{2,}/)[4], '0', 'nothing was due, so nothing ran')
  assert.match(listed.stdout, /^upload-sweep\s+instance\s+10 min/m)
})
