/**
 * The fuzz pass's requests (fuzz-requests.ts) again, now watching the database: a request the
 * server refuses (4xx) must leave every table as it was. Each table is summarized by its row count
 * and a hash of its rows, before and after each request; a refused request that changed a summary
 * is a failure, listed with the tables it changed. The control: an accepted request (a message
 * sent) does change the summaries, so a snapshot that saw nothing could not pass.
 *
 * Runs on the dialect the harness gives (SQLite, or PostgreSQL with TEST_DATABASE_URL). FUZZ_RUNS
 * sets the number of requests (CI: 1,250 on SQLite, 500 on PostgreSQL: 5 and 2 per operation), FUZZ_SEED the sequence.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, test } from 'node:test'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import fc from 'fast-check'
import { V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { FUZZ_SEED, fuzzRequests, fuzzRuns, type Prepared } from './fuzz-requests.js'

const server = await startTestServer({ env: { WS_MAX_SOCKETS_PER_USER: '5' } })
// CI: a few seconds of requests on either dialect (PostgreSQL needs a full snapshot more often: other
// databases of the cluster move its transaction ids)
const RUNS = fuzzRuns(server.database.dialect === 'sqlite' ? 1_250 : 500)
console.log(`# fuzz-db: seed ${FUZZ_SEED}, ${RUNS} requests (FUZZ_SEED, FUZZ_RUNS)`)
const fuzz = await fuzzRequests(server)
const { operations } = fuzz
const db = server.ctx.db

/**
 * What a refused request may legitimately change, by table: a list of columns left out of the
 * table's hash, or 'all' for the whole table. Each entry says why.
 */
const IGNORED = new Map<string, readonly string[] | 'all'>([
  // The scheduler's own bookkeeping: leases renewed and runs recorded on a timer, whatever the requests.
  // (What the jobs do to the other tables is checked: with nothing due they change nothing.)
  ['job_leases', 'all'],
  ['job_runs', 'all'],
  // Using a session touches it (its last_activity, and the user's) at most once a minute, whatever
  // the request then turns out to be: that is what "last active" means. (The first touch of a UTC
  // day also counts the user in daily_counters: a run across midnight would see that.)
  ['user_sessions', ['last_activity']],
  ['users', ['last_activity']],
  // SQLite's record of edited and deleted messages for the search index (whose own file is not
  // read here): derived from `messages` (which is checked), emptied by the index job on a timer and
  // before every search, so a refused search may drop what earlier accepted edits recorded.
  ['message_search_changes', 'all'],
  // SQLite's update log keeps its newest rows here until a timer moves them into `updates`
  // (realtime/updates.ts): they are summarized with `updates`, as one log, so a move is no change.
  ['recent_updates', 'all'],
])

const tables = (await db.introspection.getTables())
  .map((table) => table.name)
  .filter((name) => IGNORED.get(name) !== 'all')
  .sort()

interface TableSummary {
  rows: number
  hash: string
}
type Snapshot = Map<string, TableSummary>

/**
 * Reads the server's database over a connection of its own (never the server's: a read there
 * would queue behind, and between, the requests being judged). `version` is a cheap proof that
 * nothing was committed since the last look, where the dialect has one (SQLite's data_version
 * changes whenever another connection commits, PostgreSQL's next transaction id whenever any
 * transaction writes); null means: compare the snapshots.
 */
interface Reader {
  version(): Promise<number | null>
  snapshot(): Promise<Snapshot>
  close(): Promise<void>
}

const keptColumns = (name: string, row: Record<string, unknown>) => {
  const ignored = IGNORED.get(name)
  return Array.isArray(ignored) ? Object.fromEntries(Object.entries(row).filter(([column]) => !ignored.includes(column))) : row
}

function sqliteReader(file: string): Reader {
  const sqlite = new SQLite(file, { readonly: true, fileMustExist: true })
  // the update log is both tables, read in one statement (a move between two reads would count twice)
  const log = 'select user_id, seq, type, data, message_id, message_ids, created_at from'
  const reads = tables.map(
    (name) =>
      [name, sqlite.prepare(name === 'updates' ? `${log} updates union all ${log} recent_updates` : `select * from "${name}"`)] as const,
  )
  return {
    version: async () => sqlite.pragma('data_version', { simple: true }) as number,
    async snapshot() {
      return new Map(
        reads.map(([name, read]) => {
          // rows sorted, so the order they come in does not matter
          const lines = (read.all() as Record<string, unknown>[]).map((row) => JSON.stringify(keptColumns(name, row))).sort()
          return [name, { rows: lines.length, hash: createHash('sha256').update(lines.join('\n')).digest('hex') }]
        }),
      )
    },
    close: async () => void sqlite.close(),
  }
}

async function postgresReader(url: string): Promise<Reader> {
  const client = new pg.Client({ connectionString: url })
  // the harness drops the database (terminating this connection) when the file ends
  client.on('error', () => undefined)
  await client.connect()
  // one round trip: each table's row count and the md5 of its rows as JSON (sorted), minus the ignored columns
  const query = tables
    .map((name) => {
      const ignored = IGNORED.get(name)
      const row = Array.isArray(ignored)
        ? `(to_jsonb(t) - array[${ignored.map((column) => `'${column}'`).join(', ')}]::text[])::text`
        : 'to_jsonb(t)::text'
      return `select '${name}' as name, count(*)::int as rows, md5(coalesce(string_agg(${row}, E'\\n' order by ${row}), '')) as hash from "${name}" t`
    })
    .join(' union all ')
  return {
    // the next transaction id of the whole cluster: a refused request that wrote anything took one
    // (ids are assigned at a transaction's first write), so an unchanged xmax proves nothing was written
    version: async () =>
      Number((await client.query<{ xmax: string }>('select pg_snapshot_xmax(pg_current_snapshot())::text as xmax')).rows[0].xmax),
    async snapshot() {
      const { rows } = await client.query<{ name: string; rows: number; hash: string }>(query)
      return new Map(rows.map((row) => [row.name, { rows: row.rows, hash: row.hash }]))
    },
    close: () => client.end(),
  }
}

const reader =
  server.database.dialect === 'sqlite'
    ? sqliteReader(server.database.url.replace(/^sqlite:/, ''))
    : await postgresReader(server.database.url)
after(() => reader.close())

/** The tables whose summary differs, with their row counts. */
function changes(before: Snapshot, after: Snapshot): string[] {
  return tables
    .filter((name) => before.get(name)!.hash !== after.get(name)!.hash)
    .map((name) => `${name} (${before.get(name)!.rows} → ${after.get(name)!.rows} rows)`)
}

interface Look {
  version: number | null
  snapshot: Snapshot
}

/** The database now; `since`, when given, saves the snapshot if the version proves nothing was committed. */
async function look(since?: Look): Promise<Look> {
  const version = await reader.version()
  if (since && version !== null && version === since.version) return since
  return { version, snapshot: await reader.snapshot() }
}

/**
 * The database once nothing moves: what an accepted request set off after its answer (reactions
 * run after the commit) has landed.
 */
async function settled(): Promise<Look> {
  await broadcastsDone()
  let last = await look()
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5))
    const next = await look(last)
    if (next === last || changes(last.snapshot, next.snapshot).length === 0) return next
    last = next
  }
  return last
}

/**
 * An accepted admin broadcast goes on delivering after its answer, batch by batch (a job) with
 * pauses longer than settled()'s: wait until none is queued or running (the full run found a
 * broadcast's later batches counted against the refused requests that followed it).
 */
async function broadcastsDone() {
  for (let i = 0; i < 600; i++) {
    const busy = await server.ctx.db.selectFrom('broadcasts').select('id').where('status', 'in', ['queued', 'running']).executeTakeFirst()
    if (!busy) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('a broadcast is still delivering after 30 s')
}

const failures: string[] = []
let sent = 0
let refused = 0
let accepted = 0

test('the control: an accepted request changes the snapshot (a message is one more row)', async () => {
  const before = await settled()
  const res = await fuzz.users.alice.api.post(`${V2}/messages/send`, { receiver_id: fuzz.users.bob.id, content: 'seen by the snapshot' })
  assert.equal(res.status, 200, res.text)
  // the quick look (SQLite's data_version) sees the commit too, not only a full snapshot
  const seen = await look(before)
  assert.notEqual(seen, before, 'the look after an accepted request took a new snapshot')
  const sent = await settled()
  assert.deepEqual(changes(seen.snapshot, sent.snapshot), [])
  const changed = changes(before.snapshot, sent.snapshot)
  assert.ok(
    changed.some((line) => line.startsWith('messages ')),
    `messages changed: ${changed.join(', ')}`,
  )
  assert.equal(sent.snapshot.get('messages')!.rows, before.snapshot.get('messages')!.rows + 1)
  // the update log too, wherever SQLite keeps its newest rows
  assert.ok(
    changed.some((line) => line.startsWith('updates ')),
    `the update log changed: ${changed.join(', ')}`,
  )
  // and a request refused at the door changes nothing
  const refusedRes = await fuzz.users.alice.api.post(`${V2}/messages/send`, { receiver_id: fuzz.users.bob.id, content: '' })
  assert.equal(refusedRes.status, 400)
  assert.deepEqual(changes(sent.snapshot, (await settled()).snapshot), [])
})

test(`fuzz-db: ${RUNS} requests over every route; every refused one leaves the database as it was`, {
  timeout: Math.max(600_000, RUNS * 200),
}, async () => {
  const perOperation = Math.ceil(RUNS / operations.length)
  const started = Date.now()
  let before = await settled()
  /** sends one request; a refused one is checked against the snapshot taken just before it */
  const check = async (prepared: Prepared) => {
    // a throwaway session was signed in for it: that login is an accepted request of its own
    if (prepared.signedIn) before = await settled()
    sent++
    const answer = await fuzz.deliver(prepared)
    if (typeof answer === 'string') {
      failures.push(`${prepared.what}: ${answer}`)
      return false
    }
    const problems = fuzz.problemsOf(prepared, answer)
    if (answer.status >= 400 && answer.status < 500) {
      refused++
      const now = await look(before)
      const changed = changes(before.snapshot, now.snapshot)
      if (changed.length) problems.push(`refused, yet it changed ${changed.join(', ')}`)
      before = now
    } else {
      accepted++
      before = await settled()
    }
    if (problems.length) failures.push(`${prepared.what} → ${answer.status}: ${problems.join(', ')}: ${answer.text.slice(0, 300)}`)
    return problems.length === 0
  }
  for (const [index, op] of operations.entries()) {
    const property = fc.asyncProperty(fuzz.request, fuzz.arbitraryFor(op.body), async (input, body) =>
      check(await fuzz.prepare(op, input, body)),
    )
    const details = await fc.check(property, { numRuns: perOperation, seed: FUZZ_SEED + 7919 + index, endOnFailure: true })
    // a property that returned false has already said why, in `failures`
    if (details.errorInstance && !String(details.errorInstance).includes('returning false'))
      failures.push(`${op.method} ${op.path}: the fuzzer itself failed: ${String(details.errorInstance)}`)
  }
  console.log(
    `# fuzz-db: ${sent} requests (${refused} refused, ${accepted} not) over ${operations.length} operations and ${tables.length} tables in ${((Date.now() - started) / 1000).toFixed(1)} s (${server.ctx.dialect})`,
  )
  assert.deepEqual(failures.slice(0, 20), [], `${failures.length} bad answers`)
  assert.ok(refused > sent / 2, `most requests were refused (${refused} of ${sent})`)
  assert.ok(accepted > 0, 'some were accepted (the pass reached the handlers)')
  assert.equal((await fetch(`${server.url}/health`)).status, 200, 'the server is still up')
})
