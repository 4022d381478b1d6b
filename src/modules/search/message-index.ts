/**
 * SQLite's message search index, in a database file of its own, written by a worker thread.
 *
 * Sends do not index their message (indexing one row per commit would cost a send about half
 * again its CPU), so messages are indexed in batches, in id order, up to a mark. FTS5 merges its
 * segments inside the transactions that add to it, and past a few million messages one such merge
 * takes up to 1.4 s: on the server's connection that held every write and the event loop (the
 * 30-minute soak's p99 went from 53 ms to 2.3 s). Here the index lives in `<db>.search.<ext>`
 * (`tern.search.db` beside `tern.db`), which only the worker writes, with its own connection:
 *
 * - each pass reads the next messages (and the recorded changes) from the main database in a
 *   short read, then writes them to the index in a transaction of the search file alone, so a
 *   long merge holds nothing of the main database;
 * - edits and deletes reach it through `message_search_changes` in the main database (triggers
 *   of migration 2026-11-27T20-00 record the id of each message whose content changed or that was
 *   deleted); a change of a message already indexed takes its row out and puts its current text
 *   back; the main thread drops the changes the index has applied;
 * - the mark and how far the changes were applied are committed with the index they describe;
 *   if they are ahead of the main database (it was restored, or replaced), the index is rebuilt.
 *
 * The worker runs only when asked: by the `message-search-index` job every few seconds, and by
 * each search first (which waits for it up to a bound, so a search sees every message sent
 * before it, except while a whole index is being rebuilt). The main connection ATTACHes the file
 * as `search` to run the queries (db/dialect.ts messageSearchIds). On PostgreSQL a GIN index
 * follows every write by itself and none of this exists.
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import type SQLite from 'better-sqlite3'

/** messages per pass: large enough to amortise FTS5's per-commit work */
export const INDEX_BATCH = 2000
/** recorded changes applied per pass */
const CHANGES_BATCH = 2000

export interface CatchUp {
  /** messages added to the index */
  indexed: number
  /** recorded changes (edits, deletes) applied */
  changes: number
  /** whether the index was found ahead of the database and rebuilt from scratch */
  rebuilt: boolean
}

/** The file beside the main database that holds its search index: tern.db → tern.search.db. */
export function searchFileFor(mainFile: string): string {
  const ext = path.extname(mainFile)
  return path.join(path.dirname(mainFile), `${path.basename(mainFile, ext)}.search${ext}`)
}

/** The index's schema in the attached `search` database (created if missing; idempotent). */
function createSchema(sqlite: SQLite.Database) {
  sqlite.pragma('search.journal_mode = WAL')
  sqlite.exec(`
    create virtual table if not exists search.messages_search using fts5(content, chat, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
    create table if not exists search.search_state (id integer primary key check (id = 1), indexed_up_to integer not null, changes_up_to integer not null);
    insert or ignore into search.search_state (id, indexed_up_to, changes_up_to) values (1, 0, 0);
  `)
}

/**
 * The worker, as CommonJS source (an eval worker runs the same way under tsx and from dist/).
 * main → worker: { catchUp: n } (index everything there is, answer { done: n, … }), 'close'.
 * Passes run one per macrotask, so 'close' is heard between them.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const SQLite = require(workerData.driver)
// background work: on Linux this thread alone takes the lowest priority, so that where it shares
// a core with the event loop (a one-core machine, a pinned process) it runs in the loop's idle time
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop())
  if (tid > 0) require('node:os').setPriority(tid, 19)
} catch {}
const db = new SQLite(workerData.searchFile)
db.pragma('journal_mode = WAL')
// the index holds messages' text: the server user's alone, as the main database (db/database.ts keepPrivate)
for (const suffix of ['', '-wal', '-shm']) { try { require('node:fs').chmodSync(workerData.searchFile + suffix, 0o600) } catch {} }
db.pragma('synchronous = NORMAL')
db.pragma('busy_timeout = 5000')
db.prepare('attach database ? as m').run(workerData.mainFile)
const state = db.prepare('select indexed_up_to as mark, changes_up_to as seen from main.search_state where id = 1')
const newest = db.prepare('select coalesce(max(id), 0) from m.messages').pluck()
const lastChange = db.prepare("select coalesce((select seq from m.sqlite_sequence where name = 'message_search_changes'), 0)").pluck()
const nextMessages = db.prepare("select id, content, 'c' || chat_id as chat, (content <> '' and is_encrypted = 0) as searchable from m.messages where id > ? order by id limit ?")
const nextChanges = db.prepare('select seq, message_id as id from m.message_search_changes where seq > ? order by seq limit ?')
const current = db.prepare("select content, 'c' || chat_id as chat from m.messages where id = ? and content <> '' and is_encrypted = 0")
const insert = db.prepare('insert into main.messages_search (rowid, content, chat) values (?, ?, ?)')
const remove = db.prepare('delete from main.messages_search where rowid = ?')
const advance = db.prepare('update main.search_state set indexed_up_to = ?, changes_up_to = ? where id = 1')
const clearIndex = db.prepare("insert into main.messages_search (messages_search) values ('delete-all')")

// one consistent read of the main database, short: the rows to index and the changes to apply
const read = db.transaction(() => {
  const { mark, seen } = state.get()
  const rows = nextMessages.all(mark, workerData.batch)
  const changes = nextChanges.all(seen, workerData.changesBatch)
  const texts = new Map()
  for (const change of changes) if (change.id <= mark && !texts.has(change.id)) texts.set(change.id, current.get(change.id) ?? null)
  return { mark, seen, rows, changes, texts }
})
// then the index alone; nothing else writes it, so what was read is still what it describes
const write = db.transaction((batch) => {
  let mark = batch.mark
  for (const row of batch.rows) {
    if (row.searchable) insert.run(row.id, row.content, row.chat)
    mark = row.id
  }
  for (const [id, text] of batch.texts) {
    remove.run(id)
    if (text) insert.run(id, text.content, text.chat)
  }
  const seen = batch.changes.length ? batch.changes[batch.changes.length - 1].seq : batch.seen
  advance.run(mark, seen)
})
// an index ahead of the database (restored from a backup, or replaced) starts over
const rebuildIfAhead = db.transaction(() => {
  const { mark, seen } = state.get()
  if (mark <= newest.get() && seen <= lastChange.get()) return false
  clearIndex.run()
  advance.run(0, lastChange.get())
  return true
})

let closing = false
let running = null
const waiting = []
function step() {
  running = setImmediate(() => {
    running = null
    if (closing) return
    try {
      const batch = read()
      if (batch.rows.length || batch.changes.length) write(batch)
      totals.indexed += batch.rows.length
      totals.changes += batch.changes.length
      if (batch.rows.length === workerData.batch || batch.changes.length === workerData.changesBatch) return step()
      const { seen } = state.get()
      answer({ ...totals, changesUpTo: seen })
    } catch (error) {
      answer({ error: String(error && error.message || error) })
    }
  })
}
let totals = { indexed: 0, changes: 0, rebuilt: false }
function answer(reply) {
  for (const id of waiting.splice(0)) parentPort.postMessage({ done: id, ...reply })
  totals = { indexed: 0, changes: 0, rebuilt: false }
}
let checked = false
parentPort.on('message', (message) => {
  if (message === 'close') {
    closing = true
    if (running) clearImmediate(running)
    db.close()
    parentPort.close()
    return
  }
  waiting.push(message.catchUp)
  if (running) return
  try {
    if (!checked) totals.rebuilt = rebuildIfAhead()
    checked = true
  } catch (error) {
    return answer({ error: String(error && error.message || error) })
  }
  step()
})
parentPort.postMessage('ready')
`

type Reply = ({ done: number; changesUpTo: number } & CatchUp) | { done: number; error: string }

/**
 * The index of one SQLite database. Attaches its file to the main connection now; starts the
 * worker on the first catch-up (command-line tools that never search start none).
 */
export class MessageIndex {
  readonly file: string
  private worker: Worker | null = null
  private next = 1
  private readonly pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>()
  private closed = false

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly mainFile: string,
  ) {
    this.file = searchFileFor(mainFile)
    const attached = (sqlite.pragma('database_list') as { name: string }[]).some((db) => db.name === 'search')
    if (!attached) sqlite.prepare('attach database ? as search').run(this.file)
    createSchema(sqlite)
  }

  /**
   * Brings the index up to every message committed before the call, and applies the recorded
   * changes; then drops those changes from the main database. Rejects if the worker fails;
   * answers at once, with nothing done, once `signal` aborts.
   */
  async catchUp(signal?: AbortSignal): Promise<CatchUp> {
    if (this.closed || signal?.aborted) return { indexed: 0, changes: 0, rebuilt: false }
    const worker = this.start()
    const id = this.next++
    // a stopping server does not wait for a long rebuild: the worker stops between passes on close
    const stopped = () => this.pending.get(id)?.resolve({ done: id, indexed: 0, changes: 0, rebuilt: false, changesUpTo: 0 })
    signal?.addEventListener('abort', stopped, { once: true })
    const reply = await new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      worker.postMessage({ catchUp: id })
    }).finally(() => {
      this.pending.delete(id)
      // the job's signal lives as long as the runner: a listener left on it per run would pile up
      signal?.removeEventListener('abort', stopped)
    })
    if ('error' in reply) throw new Error(`message search index: ${reply.error}`)
    // (on the main connection, so possibly inside a transaction another request has open there:
    // if that one rolls back, the rows stay and the next catch-up drops them again)
    if (reply.changes > 0 && this.sqlite.open)
      this.sqlite.prepare('delete from message_search_changes where seq <= ?').run(reply.changesUpTo)
    return { indexed: reply.indexed, changes: reply.changes, rebuilt: reply.rebuilt }
  }

  /** Where the index stands: the last message id indexed. */
  mark(): number {
    return (this.sqlite.prepare('select indexed_up_to from search.search_state where id = 1').pluck().get() as number | undefined) ?? 0
  }

  async close(): Promise<void> {
    this.closed = true
    const worker = this.worker
    if (!worker) return
    this.worker = null
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    worker.postMessage('close')
    await exited
  }

  private start(): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        searchFile: this.file,
        mainFile: this.mainFile,
        batch: INDEX_BATCH,
        changesBatch: CHANGES_BATCH,
      },
    })
    // the process may exit without close(): an interrupted pass is rolled back by SQLite
    worker.unref()
    worker.on('message', (message: Reply | 'ready') => {
      if (message === 'ready') return
      this.pending.get(message.done)?.resolve(message)
    })
    // a worker that dies fails what waits on it; the next catch-up starts another
    const failed = (error: unknown) => {
      if (this.worker === worker) this.worker = null
      const reason = error instanceof Error ? error : new Error(`message search index worker exited (${String(error)})`)
      for (const waiter of this.pending.values()) waiter.reject(reason)
      this.pending.clear()
    }
    worker.on('error', failed)
    worker.on('exit', failed)
    this.worker = worker
    return worker
  }
}
