import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import test from 'node:test'
import SQLite from 'better-sqlite3'
import { startCheckpointer } from './checkpointer.js'

test('the worker checkpoints the WAL into the database file while the main connection never does', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tern-ckpt-'))
  const file = path.join(dir, 'x.db')
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  const checkpointer = startCheckpointer(sqlite, file)
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
