/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit
 * pushes the WAL past 1,000 pages: that commit copies the pages into the database file and syncs
 * it, stalling every request behind it for milliseconds. Here the main connection never
 * checkpoints; a worker thread with its own connection runs a PASSIVE checkpoint (which never
 * blocks writers or readers) every CHECKPOINT_INTERVAL_MS. If the worker dies, the main connection
 * takes automatic checkpoints back, so the WAL can never grow without bound.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type SQLite from 'better-sqlite3'

const CHECKPOINT_INTERVAL_MS = 200
/** a WAL file left bigger than this by a burst is cut back to it when SQLite next resets it */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024

/** The worker, as CommonJS source (an eval worker runs the same way under tsx and from dist/). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const SQLite = require(workerData.driver)
const db = new SQLite(workerData.file)
db.pragma('wal_autocheckpoint = 0')
const checkpoint = db.prepare('pragma wal_checkpoint(PASSIVE)')
const timer = setInterval(() => checkpoint.run(), workerData.intervalMs)
parentPort.on('message', () => {
  clearInterval(timer)
  db.close()
  parentPort.close()
})
`

export interface Checkpointer {
  close(): Promise<void>
}

export function startCheckpointer(sqlite: SQLite.Database, file: string): Checkpointer {
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`)
  sqlite.pragma('wal_autocheckpoint = 0')
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), file, intervalMs: CHECKPOINT_INTERVAL_MS },
  })
  // the process may exit without close(): an interrupted checkpoint is safe (SQLite is crash-safe)
  worker.unref()
  let closing = false
  let running = true
  // an error or exit before close(): back to SQLite's own checkpoints
  const fallBack = () => {
    running = false
    if (!closing && sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000')
  }
  worker.on('error', fallBack)
  worker.on('exit', fallBack)
  return {
    async close() {
      closing = true
      if (!running) return
      worker.ref()
      const exited = new Promise((resolve) => worker.once('exit', resolve))
      worker.postMessage('close')
      await exited
    },
  }
}
