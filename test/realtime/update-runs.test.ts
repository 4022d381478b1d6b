/**
 * On SQLite the send fast path logs a user's message.new entries of one group commit as one row:
 * a run (`message_ids`, one per seq, ending at the row's seq; realtime/updates.ts). Clients must
 * not see it: GET V2/updates and a socket resume from any seq, inside a run or between runs, give
 * every entry after it once and in order, with its message; a short page stops inside a run and
 * the next page goes on from there; retention keeps a run whole and reports the oldest entry a
 * client can still resume after. PostgreSQL writes one row per entry: the same reads hold there
 * (the positive controls that runs were written are SQLite's).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'
import { updateLogRows } from '../harness/update-log.js'

const KEEP = 40
const server = await startTestServer({ env: { UPDATE_LOG_KEEP: String(KEEP) } })
const sqlite = server.ctx.dialect === 'sqlite'

type Update = { type: string; seq: number; data: { message?: { message_id: number; content: string } } }

async function page(user: TestUser, since: number, limit = 1000) {
  const res = await user.api.get(`${V2}/updates`, { query: { since, limit } })
  assert.equal(res.status, 200, res.text)
  return res.body.data as { updates: Update[]; seq: number; reset: boolean }
}

/**
 * Each sender writes `count` send frames to the receiver in one go, without waiting for acks, all
 * senders in the same tick, so that the server takes them in one burst (one commit): the
 * receiver's entries of that commit are one run. Returns every sender's acked messages, in order.
 */
async function burst(senders: { socket: TestSocket; chatId: number }[], count: number, tag: string) {
  const ids = senders.map(({ socket }, s) =>
    Array.from({ length: count }, (_, i) => {
      const id = `${tag}-${s}-${i}`
      socket.send({ type: 'send', id, data: { chat_id: senders[s].chatId, content: `${tag} ${s}.${i}` } })
      return id
    }),
  )
  return Promise.all(
    senders.map(async ({ socket }, s) => {
      const acked: { message_id: number; content: string }[] = []
      for (const id of ids[s]) {
        const answer = await socket.answer(id)
        assert.equal(answer.type, 'ack', JSON.stringify(answer))
        acked.push(answer.data as { message_id: number; content: string })
      }
      return acked
    }),
  )
}

/** The entries the receiver should have: every acked message, in the order of their ids (the order they were stored). */
const expectedOf = (acked: { message_id: number; content: string }[][]) => acked.flat().sort((a, b) => a.message_id - b.message_id)

test('entries logged as runs read back one by one from any seq, over HTTP and a socket resume', async () => {
  const [bob, alice, carol] = await registerUsers(server, 3)
  // the first message of a pair opens the chat (the general path); the bursts take the fast path
  const chatA = (await send(alice, bob, 'hello from alice')).chat_id as number
  const chatC = (await send(carol, bob, 'hello from carol')).chat_id as number
  const sockets = { alice: await TestSocket.connect(server.url, alice.token), carol: await TestSocket.connect(server.url, carol.token) }
  const acked: { message_id: number; content: string }[][] = []
  // 38 entries in all: fewer than the kept number (the next test prunes)
  for (let round = 0; round < 3; round++) {
    acked.push(
      ...(await burst(
        [
          { socket: sockets.alice, chatId: chatA },
          { socket: sockets.carol, chatId: chatC },
        ],
        6,
        `r${round}`,
      )),
    )
  }
  const { entries, runs } = await updateLogRows(server.ctx.db, server.ctx.dialect)
  if (sqlite) assert.ok(runs > 0, 'positive control: some of the bursts were logged as runs')
  const bobs = entries.filter((e) => e.user_id === bob.id)
  const total = 2 + 36
  assert.deepEqual(
    bobs.map((e) => e.seq),
    Array.from({ length: total }, (_, i) => i + 1),
    'bob has one entry per seq, none missing',
  )

  const expected = expectedOf(acked)
  const full = await page(bob, 0)
  assert.equal(full.seq, total)
  assert.equal(full.reset, false)
  assert.deepEqual(
    full.updates.slice(2).map((u) => [u.type, u.data.message?.message_id, u.data.message?.content]),
    expected.map((m) => ['message.new', m.message_id, m.content]),
  )

  // from every seq, inside a run or not: exactly what follows it
  for (let since = 0; since <= total; since++) {
    const after = await page(bob, since)
    assert.deepEqual(
      after.updates.map((u) => u.seq),
      full.updates.slice(since).map((u) => u.seq),
      `since ${since}`,
    )
    assert.deepEqual(after.updates, full.updates.slice(since), `since ${since}`)
  }
  // short pages stop inside runs and go on from where they stopped
  const paged: Update[] = []
  for (let since = 0; since < total; ) {
    const next = (await page(bob, since, 5)).updates
    assert.ok(next.length === 5 || since + next.length === total, `a page of 5 from ${since}: ${next.length}`)
    paged.push(...next)
    since = next[next.length - 1].seq
  }
  assert.deepEqual(paged, full.updates)

  // a socket resuming from the middle of the log replays the rest, once and in order
  const resumeFrom = 9
  const device = await TestSocket.connect(server.url, bob.token, 'header', { seq: String(resumeFrom) })
  const replayed: number[] = []
  for (let i = resumeFrom; i < total; i++) replayed.push((await device.next('message.new')).seq!)
  assert.deepEqual(
    replayed,
    Array.from({ length: total - resumeFrom }, (_, i) => resumeFrom + i + 1),
  )
  for (const socket of [device, sockets.alice, sockets.carol]) await socket.close()
})

test('retention keeps runs whole and reports the oldest entry a client can resume after', async () => {
  const [bob, alice] = await registerUsers(server, 2)
  const chatId = (await send(alice, bob, 'first')).chat_id as number
  const socket = await TestSocket.connect(server.url, alice.token)
  // well past the kept number, so that pruning has run several times
  for (let round = 0; round < 12; round++) await burst([{ socket, chatId }], 8, `k${round}`)
  await socket.close()
  const total = 1 + 12 * 8
  const bobs = (await updateLogRows(server.ctx.db, server.ctx.dialect)).entries.filter((e) => e.user_id === bob.id)
  const oldest = bobs[0].seq
  assert.equal(bobs[bobs.length - 1].seq, total)
  assert.ok(oldest > 1, `positive control: the log was pruned (oldest kept seq ${oldest})`)
  assert.ok(total - oldest + 1 >= KEEP, `at least the newest ${KEEP} are kept (${total - oldest + 1})`)
  assert.deepEqual(
    bobs.map((e) => e.seq),
    Array.from({ length: total - oldest + 1 }, (_, i) => oldest + i),
    'what is kept has no hole',
  )

  // resuming right before the oldest kept entry loses nothing; one further back has lost one
  const kept = await page(bob, oldest - 1)
  assert.equal(kept.reset, false)
  assert.deepEqual(
    kept.updates.map((u) => u.seq),
    bobs.map((e) => e.seq),
  )
  const lost = await page(bob, oldest - 2)
  assert.equal(lost.reset, true, 'a client behind the oldest kept entry is told to reset')
})
