import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import test from 'node:test'
import SQLite from 'better-sqlite3'
import { startCheckpointer } from './checkpointer.js'

/** The test's stand-in for Kysely's connection: one holder at a time, the rest queue. */
function mutex() {
  let tail = Promise.resolve()
  return <T>(during: () => Promise<T>): Promise<T> => {
    const run = tail.then(during)
    tail = run.then(
      () => {},
      () => {},
    )
    return run
  }
}

test('the worker checkpoints the WAL into the database file while the main connection never does', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tern-ckpt-'))
  const file = path.join(dir, 'x.db')
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  const checkpointer = startCheckpointer(sqlite, file, mutex())
  try {
    assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 0)
    sqlite.exec('create table t (id integer primary key, v text)')
    const insert = sqlite.prepare('insert into t (v) values (?)')
    // 4 MiB in the WAL: SQLite's own checkpoint would have run after the first 1,000 pages
    sqlite.transaction(() => {
      for (let i = 0; i < 1024; i++) insert.run('x'.repeat(4000))
    })()
    const sizeBefore = fs.statSync(file).size
    assert.ok(sizeBefore < 1024 * 1024, `no checkpoint in the commit (${sizeBefore} bytes)`)
    const deadline = Date.now() + 5000
    while (fs.statSync(file).size < 4 * 1024 * 1024 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    assert.ok(fs.statSync(file).size >= 4 * 1024 * 1024, 'the worker copied the pages into the database file')
  } finally {
    await checkpointer.close()
    sqlite.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

/** A WAL database in a temporary directory with Tern's sync setting and one table `t`. */
function walDatabase() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tern-ckpt-'))
  const file = path.join(dir, 'x.db')
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.exec('create table t (id integer primary key, v text)')
  return { dir, file, sqlite }
}

test('under writes that never stop, the WAL still starts over instead of growing with everything written', async () => {
  const { dir, file, sqlite } = walDatabase()
  const exclusive = mutex()
  // pause for a restart once the WAL holds 256 pages (1 MiB)
  const checkpointer = startCheckpointer(sqlite, file, exclusive, { intervalMs: 20, restartFrames: 256 })
  const walSize = () => fs.statSync(`${file}-wal`).size
  // The WAL header's checkpoint sequence number (bytes 12-15) goes up each time the WAL starts over.
  const header = Buffer.alloc(16)
  const restarts = () => {
    const fd = fs.openSync(`${file}-wal`, 'r')
    try {
      fs.readSync(fd, header, 0, 16, 0)
    } finally {
      fs.closeSync(fd)
    }
    return header.readUInt32BE(12)
  }
  try {
    await checkpointer.ready
    const insert = sqlite.prepare('insert into t (v) values (?)')
    insert.run('first')
    const restartsBefore = restarts()
    let largestWal = 0
    // 48 MiB in small commits, back to back through the same gate as every writer
    for (let i = 0; i < 12288; i++) {
      await exclusive(async () => {
        insert.run('x'.repeat(4000))
      })
      largestWal = Math.max(largestWal, walSize())
      if (i % 16 === 0) await new Promise((resolve) => setImmediate(resolve))
    }
    assert.equal((sqlite.prepare('select count(*) as n from t').get() as { n: number }).n, 12289)
    // Each commit writes ~3 pages, so without rewinds the WAL ends near 150 MiB. With them it peaks
    // at what the writer adds between two pauses: 4-10 MiB on a slow machine, ~40 MiB where a
    // commit takes 20 us and the worker's 20 ms interval lets thousands through, more when the
    // worker thread gets little CPU (a contended machine); the rewinds themselves are counted.
    const rewinds = restarts() - restartsBefore
    assert.ok(rewinds >= 3, `the WAL started over ${rewinds} times while 48 MiB were written`)
    assert.ok(largestWal < 100 * 1024 * 1024, `the WAL was reused (largest ${(largestWal / 1048576).toFixed(1)} MiB of 48 MiB written)`)
  } finally {
    await checkpointer.close()
    sqlite.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

/**
 * Runs writes through a checkpointer whose checkpoint inside a pause hangs for 400 ms (a slow disk;
 * a pause may first last 20 ms) until it has taken three pauses; how long each held writers back.
 */
async function holdsWhileTheDiskHangs(longWalFrames: number): Promise<number[]> {
  const { dir, file, sqlite } = walDatabase()
  const exclusive = mutex()
  const holds: number[] = []
  const timed = (during: () => Promise<void>) =>
    exclusive(async () => {
      const start = performance.now()
      await during()
      holds.push(performance.now() - start)
    })
  const checkpointer = startCheckpointer(sqlite, file, timed, {
    intervalMs: 10,
    restartFrames: 64,
    longWalFrames,
    pauseLimitMs: 20,
    stallMs: 400,
  })
  try {
    await checkpointer.ready
    const insert = sqlite.prepare('insert into t (v) values (?)')
    const deadline = Date.now() + 20_000
    while (holds.length < 3 && Date.now() < deadline) {
      await exclusive(async () => {
        insert.run('x'.repeat(4000))
      })
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    assert.ok(holds.length >= 3, `three pauses (got ${holds.length})`)
    return holds.map((ms) => Math.round(ms))
  } finally {
    await checkpointer.close()
    sqlite.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

test('while the WAL is not yet long, a pause whose checkpoint hangs (a slow disk) is cut short every time', async () => {
  const holds = await holdsWhileTheDiskHangs(1_000_000)
  // (doubling would make the third at least 80 ms)
  for (const [i, ms] of holds.entries()) {
    assert.ok(ms >= 19 && ms < 60, `pause ${i + 1} was cut at the first limit of 20 ms, not held longer (${ms} ms)`)
  }
})

test('once the WAL is long (a disk slow for good), each pause that runs out may be followed by one twice as long', async () => {
  const [first, second, third] = await holdsWhileTheDiskHangs(64)
  assert.ok(first >= 19 && first < 200, `the first pause was cut at its limit, not held for the whole hang (${first} ms)`)
  assert.ok(second >= 39 && second < 300, `the next could last twice as long (${second} ms)`)
  assert.ok(third >= 79, `and the one after that twice again (${third} ms)`)
})
