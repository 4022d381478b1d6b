/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever commit
 * pushes the WAL past 1,000 pages: that commit copies the pages into the database file and syncs
 * it, stalling every request behind it for milliseconds. Here the main connection never
 * checkpoints; a worker thread with its own connection runs a PASSIVE checkpoint (which never
 * blocks writers or readers) every CHECKPOINT_INTERVAL_MS. If the worker dies, the main connection
 * takes automatic checkpoints back, so the WAL can never grow without bound.
 *
 * A passive checkpoint alone never lets the WAL start over under steady writes: SQLite rewinds the
 * WAL only when a write begins while every frame is already copied back, and the main connection
 * commits again while each checkpoint runs. So once the WAL holds RESTART_FRAMES, the worker runs
 * passes back to back until one finds almost nothing new, then asks for a pause: the main thread
 * takes Kysely's connection (so no write of any path can start; the event loop runs on), the
 * worker copies the few frames written since its last pass, and the first write after the pause
 * rewinds the WAL (and cuts the file back to WAL_SIZE_LIMIT). The pause lasts one small
 * checkpoint and its sync, once per RESTART_FRAMES of writes. A sync that hangs (a slow or busy
 * disk) must not hold every write for long: past PAUSE_LIMIT_MS writes go on without the rewind.
 * A disk that stalls for a few seconds only lets the WAL grow meanwhile, and it starts over once
 * the disk is back. Only once the WAL has grown past LONG_WAL_RESTARTS × RESTART_FRAMES (a disk
 * slow for good) may each pause that runs out be followed by one twice as long, so that the WAL
 * still starts over: then a long WAL costs more than a long pause.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type SQLite from 'better-sqlite3'

/**
 * Short, so that each pass is short: the worker shares the CPU with the main thread (on a one-core
 * machine, or when both are pinned to one core), and a pass over 200 ms of heavy writes (~8,000
 * frames) took 20–28 ms, holding requests back by up to that long; at 25 ms a pass (~800 frames)
 * takes 3–6 ms, its two syncs included. An idle tick (nothing new in the WAL) only reads the WAL
 * index: no copy, no sync.
 */
const CHECKPOINT_INTERVAL_MS = 25
/**
 * While the WAL does not change, the wait between looks doubles up to this: an idle server does
 * not wake 40 times a second. The first write after a quiet spell is seen within it, so a burst
 * may grow the WAL for that long before the passes catch up.
 */
const CHECKPOINT_IDLE_MAX_MS = 2000
/** a WAL file left bigger than this by a burst is cut back to it when SQLite next resets it */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024
/**
 * WAL frames (pages) after which writes pause briefly so that the WAL can start over: 32 MiB of
 * 4 KiB pages, below WAL_SIZE_LIMIT, so that in steady use the file is reused, not cut and regrown
 */
const RESTART_FRAMES = 8192
/** catch-up passes before a pause run until one finds at most this many new frames */
const SETTLED_FRAMES = 64
/** a pause the worker does not end within this is ended by the main thread (usually it takes 1-7 ms) */
const PAUSE_LIMIT_MS = 50
/** with a WAL this many times RESTART_FRAMES (128 MiB), pauses that run out may grow */
const LONG_WAL_RESTARTS = 4
/** from then on, after each pause that ran out the next may last twice as long, up to this */
const PAUSE_LIMIT_MAX_MS = 1000

/**
 * The worker, as CommonJS source (an eval worker runs the same way under tsx and from dist/).
 * Messages: worker → main 'ready' (connection open), { pause: frames } (the WAL holds this many
 * frames: stop writing) and 'resume' (caught up);
 * main → worker 'paused' (no write can start now) and 'close'.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const SQLite = require(workerData.driver)
const db = new SQLite(workerData.file)
db.pragma('wal_autocheckpoint = 0')
const checkpoint = db.prepare('pragma wal_checkpoint(PASSIVE)')
let pausing = false
// until the first write after a pause rewinds it, the WAL still reports its old length
let pausedAt = -1
// An idle database is looked at less and less often (the wait doubles up to idleMaxMs while the
// WAL stays as it was); the first change found brings the short interval back.
let seen = -1
let wait = workerData.intervalMs
let timer = setTimeout(function tick() {
  try {
    step()
  } finally {
    timer = setTimeout(tick, wait)
  }
}, wait)
function step() {
  if (pausing) return
  let { log } = checkpoint.get()
  wait = log === seen ? Math.min(wait * 2, workerData.idleMaxMs) : workerData.intervalMs
  seen = log
  if (log < workerData.restartFrames || log === pausedAt) return
  // Each pass copies what was written during the one before, so a few passes in a row leave only
  // a moment's frames for the pass that runs while writes wait.
  for (let pass = 0; pass < 8; pass++) {
    const before = log
    log = checkpoint.get().log
    if (log - before <= workerData.settledFrames) break
  }
  pausing = true
  pausedAt = log
  seen = log
  parentPort.postMessage({ pause: log })
}
parentPort.postMessage('ready')
parentPort.on('message', (message) => {
  if (message === 'paused') {
    // tests: a sync that hangs
    if (workerData.stallMs) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.stallMs)
    try {
      checkpoint.get()
    } catch {
      // busy or failing: the WAL starts over another time
    } finally {
      pausing = false
      parentPort.postMessage('resume')
    }
    return
  }
  clearTimeout(timer)
  db.close()
  parentPort.close()
})
`

export interface Checkpointer {
  /** settles once the worker has its connection open (or has failed) */
  ready: Promise<void>
  close(): Promise<void>
}

/**
 * Starts the worker for a connection. `exclusive` runs a function while no write can start on that
 * connection (in Tern: while holding Kysely's only connection, which the hot path's group commits
 * take too).
 */
export function startCheckpointer(
  sqlite: SQLite.Database,
  file: string,
  exclusive: (during: () => Promise<void>) => Promise<void>,
  tuning: { intervalMs?: number; restartFrames?: number; longWalFrames?: number; pauseLimitMs?: number; stallMs?: number } = {},
): Checkpointer {
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`)
  sqlite.pragma('wal_autocheckpoint = 0')
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      file,
      intervalMs: tuning.intervalMs ?? CHECKPOINT_INTERVAL_MS,
      idleMaxMs: Math.max(tuning.intervalMs ?? CHECKPOINT_INTERVAL_MS, CHECKPOINT_IDLE_MAX_MS),
      restartFrames: tuning.restartFrames ?? RESTART_FRAMES,
      settledFrames: SETTLED_FRAMES,
      stallMs: tuning.stallMs ?? 0,
    },
  })
  // the process may exit without close(): an interrupted checkpoint is safe (SQLite is crash-safe)
  worker.unref()
  let closing = false
  let running = true
  const firstLimit = tuning.pauseLimitMs ?? PAUSE_LIMIT_MS
  const longWalFrames = tuning.longWalFrames ?? LONG_WAL_RESTARTS * (tuning.restartFrames ?? RESTART_FRAMES)
  /** how long the next pause of a long WAL may last */
  let longPauseLimit = firstLimit
  /** ends the current pause (the worker caught up, died, or took too long) */
  let endPause: (() => void) | null = null
  let markReady!: () => void
  const ready = new Promise<void>((resolve) => (markReady = resolve))
  worker.on('message', (message: 'ready' | 'resume' | { pause: number }) => {
    if (message === 'ready') markReady()
    if (message === 'resume' && endPause) {
      longPauseLimit = firstLimit
      endPause()
    }
    if (typeof message !== 'object' || closing) return
    const long = message.pause >= longWalFrames
    const limit = long ? longPauseLimit : firstLimit
    void exclusive(
      () =>
        new Promise<void>((resolve) => {
          const timeout = setTimeout(() => {
            if (long) longPauseLimit = Math.min(longPauseLimit * 2, PAUSE_LIMIT_MAX_MS)
            endPause?.()
          }, limit)
          endPause = () => {
            clearTimeout(timeout)
            endPause = null
            resolve()
          }
          if (!running) endPause()
          else worker.postMessage('paused')
        }),
    ).catch(() => {})
  })
  // an error or exit before close(): back to SQLite's own checkpoints
  const fallBack = () => {
    running = false
    markReady()
    endPause?.()
    if (!closing && sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000')
  }
  worker.on('error', fallBack)
  worker.on('exit', fallBack)
  return {
    ready,
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
