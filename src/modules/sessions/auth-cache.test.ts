import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import test from 'node:test'
import SQLite from 'better-sqlite3'
import { createDatabase, type DatabaseHandle } from '../../db/database.js'
import { migrateToLatest } from '../../db/migrate.js'
import { AuthCache } from './auth-cache.js'

async function withDatabase(fn: (handle: DatabaseHandle, file: string) => Promise<void>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tern-auth-cache-'))
  const file = path.join(dir, 'tern.db')
  const handle = createDatabase(`sqlite:${file}`)
  try {
    await migrateToLatest(handle.db)
    await fn(handle, file)
  } finally {
    await handle.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

async function addUser(handle: DatabaseHandle, username: string, tokenHash: string) {
  const now = Date.now()
  const user = await handle.db
    .insertInto('users')
    .values({
      username,
      email: null,
      display_name: username,
      password_hash: 'x',
      avatar: null,
      phone: null,
      birthday: null,
      bot_webapp_url: null,
      last_seen: null,
      last_activity: now,
      premium_expires_at: null,
      two_factor_secret: null,
      appearance_settings: null,
      deleted_at: null,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await handle.db
    .insertInto('user_sessions')
    .values({ user_id: user.id, token_hash: tokenHash, token_prefix: 'abcdef', created_at: now, last_activity: now })
    .execute()
  return user.id
}

test('a token is read once, then served from memory until its user or session changes', async () => {
  await withDatabase(async (handle) => {
    const cache = new AuthCache(handle.sqlite!, handle.reader!)
    const alice = await addUser(handle, 'alice', 'hash-a')
    await addUser(handle, 'bob', 'hash-b')

    const first = cache.find('hash-a')!
    assert.equal(first.user.username, 'alice')
    assert.equal(cache.find('hash-a'), first, 'the second lookup is the cached entry')
    assert.ok(Object.isFrozen(first.user), 'the shared row cannot be changed by a request')
    assert.equal(cache.find('unknown'), undefined)
    assert.equal(cache.size, 1, 'unknown tokens are not cached')
    cache.find('hash-b')
    assert.equal(cache.size, 2)

    // a change to the user's row drops the user's entries, and only theirs
    await handle.db.updateTable('users').set({ display_name: 'Alice A.' }).where('id', '=', alice).execute()
    assert.equal(cache.size, 1)
    assert.equal(cache.find('hash-a')!.user.display_name, 'Alice A.')

    // revoking the session: the next lookup sees it inactive
    await handle.db.updateTable('user_sessions').set({ is_active: 0 }).where('token_hash', '=', 'hash-a').execute()
    assert.equal(cache.find('hash-a')!.sessionIsActive, 0)

    // deleting the session: gone
    await handle.db.deleteFrom('user_sessions').where('token_hash', '=', 'hash-a').execute()
    assert.equal(cache.find('hash-a'), undefined)
  })
})

test('nothing is cached from the old row while a write to it is not yet committed', async () => {
  await withDatabase(async (handle) => {
    const cache = new AuthCache(handle.sqlite!, handle.reader!)
    const carol = await addUser(handle, 'carol', 'hash-c')
    assert.equal(cache.find('hash-c')!.user.is_admin, 0)

    let resume!: () => void
    const paused = new Promise<void>((resolve) => (resume = resolve))
    let inside!: () => void
    const written = new Promise<void>((resolve) => (inside = resolve))
    const transaction = handle.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ is_admin: 1 }).where('id', '=', carol).execute()
      inside()
      await paused
    })
    await written
    // the reader still sees the committed (old) row, and that must not be kept
    assert.equal(cache.find('hash-c')!.user.is_admin, 0)
    assert.equal(cache.size, 0)
    resume()
    await transaction
    assert.equal(cache.find('hash-c')!.user.is_admin, 1)
  })
})

test("another process's writes drop the whole cache within the check interval", async () => {
  await withDatabase(async (handle, file) => {
    const cache = new AuthCache(handle.sqlite!, handle.reader!)
    const dave = await addUser(handle, 'dave', 'hash-d')
    assert.equal(cache.find('hash-d')!.user.is_active, 1)

    const other = new SQLite(file)
    try {
      other.prepare('update users set is_active = 0 where id = ?').run(dave)
    } finally {
      other.close()
    }
    await new Promise((resolve) => setTimeout(resolve, 150))
    assert.equal(cache.find('hash-d')!.user.is_active, 0)
  })
})

test('the cache holds at most its bound, dropping the oldest entries', async () => {
  await withDatabase(async (handle) => {
    const cache = new AuthCache(handle.sqlite!, handle.reader!, 3)
    for (let i = 0; i < 5; i++) await addUser(handle, `user${i}`, `hash-${i}`)
    for (let i = 0; i < 5; i++) cache.find(`hash-${i}`)
    assert.equal(cache.size, 3)
    const kept = cache.find('hash-4')
    assert.equal(cache.find('hash-4'), kept, 'the newest is still cached')
    // an evicted user's later change must not fail on the dropped entry
    await handle.db.updateTable('users').set({ display_name: 'x' }).execute()
    assert.equal(cache.size, 0)
  })
})
