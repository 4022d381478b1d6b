/**
 * SQLite keeps the update log's newest rows in a recent log and moves them into the main log
 * within about a quarter second, a slice of users at a time once the log is large
 * (realtime/updates.ts). Clients must see one log: a replay that spans both tables, a retention
 * prune, a restart with rows still waiting, a row whose user is gone, a log moved in slices. The
 * tables are looked at directly only to know where the rows are.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { holdRecentMoves, moveRecent, moveSlice, record } from '../../src/realtime/updates.js'
import { registerUsers, send, updates, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'
import { waitFor } from '../harness/wait.js'

let server = await startTestServer({ env: { UPDATE_LOG_KEEP: '20' } })
const skip = server.ctx.dialect !== 'sqlite' && 'SQLite only (PostgreSQL writes the update log directly)'

/** A user's rows in one of the two tables. */
async function rowsIn(table: 'updates' | 'recent_updates', userId: number) {
  const rows = await server.ctx.db.selectFrom(table).select('seq').where('user_id', '=', userId).orderBy('seq').execute()
  return rows.map((row) => row.seq)
}

/** Waits until the recent log has moved (a small log is emptied whole). */
const moved = () =>
  waitFor(
    async () => ((await server.ctx.db.selectFrom('recent_updates').select('seq').limit(1).execute()).length === 0 ? true : undefined),
    {
      timeoutMs: 3000,
      message: 'the recent update log moved',
    },
  )

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

test('SQLite: new update rows wait in the recent log and move on their own, in one piece', { skip }, async () => {
  const [alice, bob] = await registerUsers(server, 2)
  // the first send opens the chat (general path), the rest take the hot path
  for (let i = 1; i <= 3; i++) await send(alice, bob, `m${i}`)
  await moved()
  assert.deepEqual(await rowsIn('recent_updates', bob.id), [])
  assert.deepEqual(await rowsIn('updates', bob.id), [1, 2, 3])
  // and again: new rows go to the recent log first, then follow
  await send(alice, bob, 'm4')
  await moved()
  assert.deepEqual(await rowsIn('updates', bob.id), [1, 2, 3, 4])
  assert.deepEqual(await rowsIn('updates', alice.id), [1, 2, 3, 4])
})

/**
 * Sends `count` more messages and runs `read` while bob's newest rows are still in the recent log
 * and his older ones are not (the moves are held meanwhile: a small log moves within 25 ms of a
 * write, sooner than a dozen sends and a read): true if it was so.
 */
async function whileSplit(alice: TestUser, bob: TestUser, count: number, read: () => Promise<void>) {
  await moved()
  const release = holdRecentMoves(server.ctx)
  try {
    for (let i = 0; i < count; i++) await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: `split ${i}` })
    await read()
    // rows never move back: still there now means there during the read
    return (await rowsIn('recent_updates', bob.id)).length === count && (await rowsIn('updates', bob.id)).length > 0
  } finally {
    release()
  }
}

test('SQLite: GET updates and a socket resume read moved and unmoved rows as one log, in order', { skip }, async () => {
  const [alice, bob] = await registerUsers(server, 2)
  for (let i = 1; i <= 3; i++) await send(alice, bob, `old ${i}`)
  let page: Awaited<ReturnType<typeof updates>> | null = null
  let resumed: number[] = []
  const split = await whileSplit(alice, bob, 3, async () => {
    page = await updates(bob)
    const socket = await TestSocket.connect(server.url, bob.token)
    socket.send({ type: 'resume', seq: 1 })
    resumed = []
    for (let i = 0; i < page.seq - 1; i++) resumed.push((await socket.next('message.new')).seq!)
    await socket.close()
  })
  assert.ok(split, 'a read found the log split between the two tables')
  const { items, seq } = page!
  assert.deepEqual(
    items.map((u) => u.seq),
    range(1, seq),
  )
  assert.equal(items.at(-1)!.data.message.content.startsWith('split'), true)
  assert.equal(items[0].data.message.content, 'old 1')
  assert.deepEqual(resumed, range(2, seq))
  // a page limit that ends inside the recent rows, and one that starts there
  const head = await bob.api.get(`${V2}/updates`, { query: { since: 0, limit: seq - 1 } })
  assert.deepEqual(
    head.body.data.updates.map((u: { seq: number }) => u.seq),
    range(1, seq - 1),
  )
  const tail = await bob.api.get(`${V2}/updates`, { query: { since: seq - 1, limit: 10 } })
  assert.deepEqual(
    tail.body.data.updates.map((u: { seq: number }) => u.seq),
    [seq],
  )
})

test('SQLite: retention prunes a log split between the two tables and keeps exactly the newest', { skip }, async () => {
  // UPDATE_LOG_KEEP=20: every seq past 20 prunes (the step is at least 1)
  const [alice, bob] = await registerUsers(server, 2)
  for (let i = 1; i <= 15; i++) await send(alice, bob, `a${i}`)
  // positive control: nothing pruned yet, the 15 rows moved
  await moved()
  assert.deepEqual(await rowsIn('updates', bob.id), range(1, 15))
  let page: Awaited<ReturnType<typeof updates>> | null = null
  const split = await whileSplit(alice, bob, 12, async () => {
    page = await updates(bob)
  })
  assert.ok(split, 'the prune ran with the log split between the two tables')
  const seq = page!.seq
  assert.deepEqual(
    page!.items.map((u) => u.seq),
    range(seq - 19, seq),
  )
  const res = await bob.api.get(`${V2}/updates`, { query: { since: 0, limit: 100 } })
  assert.equal(res.body.data.reset, true, 'the oldest seqs are gone')
  const inside = await bob.api.get(`${V2}/updates`, { query: { since: seq - 20, limit: 100 } })
  assert.equal(inside.body.data.reset, false, 'nothing after the oldest kept was pruned')
  // after the move the main log holds exactly the newest 20, none twice
  await moved()
  assert.deepEqual(await rowsIn('updates', bob.id), range(seq - 19, seq))
})

test('SQLite: more than the kept number of updates within one round are pruned in the recent log itself', { skip }, async () => {
  // UPDATE_LOG_KEEP=20, and the moves held: every row stays in the recent log, none in the main one
  const [carol] = await registerUsers(server, 1)
  await moved()
  const release = holdRecentMoves(server.ctx)
  try {
    const log = (count: number) =>
      server.ctx.db.transaction().execute(async (trx) => {
        for (let i = 0; i < count; i++) await record(server.ctx, trx, [carol.id], 'chat.updated', { chat_id: 0 }, Date.now())
      })
    await log(20)
    // positive control: the kept number, nothing pruned yet
    assert.deepEqual(await rowsIn('recent_updates', carol.id), range(1, 20))
    await log(5)
    assert.deepEqual(await rowsIn('updates', carol.id), [])
    assert.deepEqual(await rowsIn('recent_updates', carol.id), range(6, 25))
  } finally {
    release()
  }
  await moved()
  assert.deepEqual(await rowsIn('updates', carol.id), range(6, 25))
})

test('SQLite: a row whose user is gone does not hold the move up; the others move', { skip }, async () => {
  const [alice, bob] = await registerUsers(server, 2)
  await send(alice, bob, 'before')
  await moved()
  // a row of a user deleted outside the server (the recent log has no foreign key to users)
  await server.ctx.db
    .insertInto('recent_updates')
    .values({ user_id: 2_000_000_000, seq: 1, type: 'chat.updated', data: '{}', message_id: null, created_at: Date.now() })
    .execute()
  await send(alice, bob, 'after')
  await moveRecent(server.ctx)
  assert.deepEqual(await rowsIn('recent_updates', 2_000_000_000), [])
  assert.deepEqual(await rowsIn('updates', 2_000_000_000), [])
  assert.deepEqual(await rowsIn('updates', bob.id), [1, 2])
})

test('SQLite: a large recent log moves a slice of users at a time, never splitting a user, until all of it has moved', {
  skip,
}, async () => {
  const users = await registerUsers(server, 24)
  await moved()
  // 23 users with 10 rows each and one with 60: 290 rows, past the size that moves whole
  const big = users[7]
  const planted = (user: TestUser) => range(1001, user === big ? 1060 : 1010)
  const now = Date.now()
  // in the order a busy server writes them: each user's next row in turn
  const rows = range(1001, 1060).flatMap((seq) =>
    users
      .filter((user) => planted(user).includes(seq))
      .map((user) => ({ user_id: user.id, seq, type: 'chat.updated', data: '{}', message_id: null, created_at: now })),
  )
  await server.ctx.db.insertInto('recent_updates').values(rows).execute()
  const where = async (user: TestUser) => ({ recent: await rowsIn('recent_updates', user.id), moved: await rowsIn('updates', user.id) })

  assert.equal(await moveSlice(server.ctx), true, 'rows are left after one slice')
  const after = await Promise.all(users.map(where))
  const movedUsers = users.filter((_, i) => after[i].moved.length > 0)
  for (const [i, user] of users.entries()) {
    const { recent, moved } = after[i]
    // a user's rows move together: all in one table or all in the other
    assert.ok(recent.length === 0 || moved.length === 0, `user ${i}'s rows were split: ${recent.length} recent, ${moved.length} moved`)
    assert.deepEqual([...moved, ...recent], planted(user))
  }
  // about a tenth of the rows (29), plus the rest of the last user's: some users moved, most did not
  const movedRows = after.reduce((n, w) => n + w.moved.length, 0)
  assert.ok(movedUsers.length >= 1 && movedRows <= 29 + 60, `moved ${movedRows} rows of ${movedUsers.length} users`)
  assert.ok(movedUsers.length < users.length - 10, `moved ${movedUsers.length} of ${users.length} users in one slice`)

  // clients see one log either way: a moved user and one still waiting
  const waiting = users.find((_, i) => after[i].moved.length === 0)!
  for (const user of [movedUsers[0], waiting]) {
    const res = await user.api.get(`${V2}/updates`, { query: { since: 1000, limit: 100 } })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(
      res.body.data.updates.map((u: { seq: number }) => u.seq),
      planted(user),
    )
  }

  // rows written during the round wait for the next one: for a user whose rows already moved (the
  // last user moved, where the next slice starts), and for one whose rows are still waiting
  const late = movedUsers.reduce((a, b) => (a.id > b.id ? a : b))
  const lateRow = (user: TestUser) => ({
    user_id: user.id,
    seq: planted(user).at(-1)! + 1,
    type: 'chat.updated',
    data: '{}',
    message_id: null,
    created_at: now,
  })
  await server.ctx.db
    .insertInto('recent_updates')
    .values([lateRow(late), lateRow(waiting)])
    .execute()
  const withLate = (user: TestUser) => (user === late || user === waiting ? [...planted(user), planted(user).at(-1)! + 1] : planted(user))
  let slices = 1
  for (;;) {
    const more = await moveSlice(server.ctx)
    // after every slice, each user's waiting rows are newer than their moved ones: one log in order
    for (const user of users) {
      const { recent, moved } = await where(user)
      assert.deepEqual([...moved, ...recent], withLate(user), `user ${user.id} after slice ${slices}`)
    }
    if (!more) break
    slices++
  }
  // the round's ten or so slices, then the late rows' own round
  assert.ok(slices >= 3 && slices <= 12, `${slices} slices`)
  for (const user of users) {
    assert.deepEqual(await rowsIn('recent_updates', user.id), [])
    assert.deepEqual(await rowsIn('updates', user.id), withLate(user))
  }
})

test('SQLite: rows still in the recent log when the server stops are read after a restart, and move after its first write', {
  skip,
}, async () => {
  const [alice, bob] = await registerUsers(server, 2)
  await send(alice, bob, 'one')
  await moved()
  // a row written and not yet moved when the server stops, with its counter (written directly: a
  // send's own timer would move it before the restart begins)
  await server.ctx.db
    .insertInto('recent_updates')
    .values({
      user_id: bob.id,
      seq: 2,
      type: 'chat.updated',
      data: JSON.stringify({ chat_id: 0, note: 'left behind' }),
      message_id: null,
      created_at: Date.now(),
    })
    .execute()
  await server.ctx.db.updateTable('update_seqs').set({ seq: 2 }).where('user_id', '=', bob.id).execute()
  server = await server.restart()
  assert.deepEqual(await rowsIn('recent_updates', bob.id), [2])
  const api = server.api.as(bob.token)
  const res = await api.get(`${V2}/updates`, { query: { since: 0, limit: 100 } })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(
    res.body.data.updates.map((u: { seq: number; type: string }) => [u.seq, u.type]),
    [
      [1, 'message.new'],
      [2, 'chat.updated'],
    ],
  )
  assert.equal(res.body.data.seq, 2)
  // the next update goes on from there, and everything moves
  const next = await server.api.as(alice.token).post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'three' })
  assert.equal(next.status, 200, next.text)
  await moved()
  assert.deepEqual(await rowsIn('updates', bob.id), [1, 2, 3])
})

test.after(() => server.close())
