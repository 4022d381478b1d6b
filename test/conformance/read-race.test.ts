/**
 * Found by the conformance run on PostgreSQL (CI, 2026-11-29): a read racing sends in its chat
 * answered 500. A read moves the reader's member row, then the update logs (update_seqs); the
 * batch path's one write statement moved the recipients' update seqs and both members' rows in
 * whatever order PostgreSQL ran its parts, so it could hold the reader's update_seqs row while
 * waiting for the reader's member row: a deadlock, and either the read (a 500) or the batch (its
 * sends then took the general path, a debug line) was aborted. Now the batch locks both members'
 * rows with the chat's, before it writes anything.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { V2 } from '../harness/messaging.js'
import { captureLog } from '../harness/log-capture.js'
import { startTestServer } from '../harness/server.js'

const log = captureLog('debug')
const server = await startTestServer({ log: log.logger })

test('reading a chat while both members send in it: every request succeeds, and no send batch is rolled back', async () => {
  const [alice, bob] = [await server.registerUser(), await server.registerUser()]
  const first = (await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'first' })).body.data
  const chatId = first.chat_id as number
  let newest = first.message_id as number
  let reads = 0
  const failures: string[] = []
  const check = <R extends { status: number; text: string }>(res: R, what: string): R => {
    if (res.status !== 200) failures.push(`${what}: ${res.status} ${res.text}`)
    return res
  }
  // each member sends from two loops and reads up to the newest message from two more, at once
  const sender = (user: typeof alice, name: string) => async () => {
    for (let n = 0; n < 100; n++) {
      const res = check(await user.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `${name} ${n}` }), `send ${name} ${n}`)
      if (res.status === 200) newest = Math.max(newest, res.body.data.message_id as number)
    }
  }
  const reader = (user: typeof alice, name: string) => async () => {
    for (let n = 0; n < 100; n++) {
      check(await user.api.post(`${V2}/messages/${newest}/read`), `read ${name} ${n}`)
      reads++
    }
  }
  await Promise.all(
    [
      sender(alice, 'a1'),
      sender(alice, 'a2'),
      sender(bob, 'b1'),
      sender(bob, 'b2'),
      reader(alice, 'a'),
      reader(alice, 'a'),
      reader(bob, 'b'),
      reader(bob, 'b'),
    ].map((loop) => loop()),
  )
  assert.deepEqual(failures, [])
  // the batch path's deadlock victim is not a failed request: its sends go the general way, saying so at debug
  const rolledBack = log.entries().filter((entry) => entry.msg?.startsWith('send batch rolled back'))
  assert.deepEqual(
    rolledBack.map((entry) => `${entry.err?.code}: ${entry.err?.message}`),
    [],
  )
  // positive controls: the log is read (each request has its line), the sends landed, the reads moved the positions
  assert.ok(log.entries().filter((entry) => entry.req || entry.res).length >= 200, 'request lines are in the captured log')
  const history = await alice.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 100 } })
  assert.equal(history.status, 200, history.text)
  assert.ok(
    (history.body.items as { message_id: number }[]).some((m) => m.message_id === newest),
    'the newest message is in the history',
  )
  const read = await bob.api.post(`${V2}/messages/${newest}/read`)
  assert.equal(read.status, 200, read.text)
  assert.equal(read.body.data.unread_count, 0)
  assert.equal(reads, 400)
})
