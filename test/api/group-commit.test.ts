/**
 * Group commit (docs/decisions/group-commit.md): sends that arrive together are written in one transaction (SQLite's
 * fast path, PostgreSQL's batches). A send that fails inside a batch fails alone; the rest of its
 * batch commits; acknowledged sends are stored; every chat's seqs stay gap-free and each
 * sender's order per chat is kept, on one instance and on two sharing PostgreSQL.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import test, { after } from 'node:test'
import { sql } from 'kysely'
import { testDatabaseUrl, testRedisUrl } from '../harness/database.js'
import { registerUsers, send, V2, wholeHistory as newestFirst } from '../harness/messaging.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { waitFor } from '../harness/wait.js'
import { batchPath } from '../../src/modules/messages/posting-pg.js'
import { TestSocket } from '../harness/socket.js'

const server = await startTestServer({
  env: { WS_FRAME_RATE_LIMIT: '10000/1', WRITE_RATE_LIMIT_USER: '1000000/60', WRITE_RATE_LIMIT_IP: '1000000/60' },
})
after(() => server.close())

/** Every message of a chat, oldest first. */
const wholeHistory = async (user: TestUser, chatId: number) => (await newestFirst(user, chatId)).reverse()

/** The chat's seqs, read from the database: 1..n without a gap or a repeat. */
async function assertGapFree(on: TestServer, chatId: number, expected: number) {
  const rows = await on.ctx.db.selectFrom('messages').select('seq').where('chat_id', '=', chatId).orderBy('seq').execute()
  assert.deepEqual(
    rows.map((r) => Number(r.seq)),
    Array.from({ length: expected }, (_, i) => i + 1),
    `chat ${chatId}'s seqs`,
  )
}

test('a send that fails inside a batch fails alone: the rest of the batch is stored and acknowledged', async () => {
  const users = await registerUsers(server, 6)
  const [alice] = users
  // open the chats first (a new pair takes the general path), so the burst takes the group-commit path
  const chats = await Promise.all(users.slice(1).map(async (peer) => (await send(alice, peer, 'hello')).chat_id as number))
  // a message the database refuses: a trigger, as a failing constraint or a full disk would
  const poison = `poison-${randomBytes(4).toString('hex')}`
  if (server.ctx.dialect === 'sqlite') {
    await sql
      .raw(
        `create trigger refuse_poison before insert on messages when new.content = '${poison}' begin select raise(abort, 'refused'); end`,
      )
      .execute(server.ctx.db)
  } else {
    await sql
      .raw(`create function refuse_poison() returns trigger language plpgsql as $$ begin
      if new.content = '${poison}' then raise exception 'refused'; end if; return new; end $$`)
      .execute(server.ctx.db)
    await sql
      .raw('create trigger refuse_poison before insert on messages for each row execute function refuse_poison()')
      .execute(server.ctx.db)
  }
  try {
    const socket = await TestSocket.connect(server.url, alice.token)
    // one burst, sent without waiting: the sends of one moment share a batch
    const burst = Array.from({ length: 40 }, (_, i) => ({ chat_id: chats[i % chats.length], content: i === 17 ? poison : `burst ${i}` }))
    for (const [i, data] of burst.entries()) socket.send({ type: 'send', id: i, data })
    const answers = await Promise.all(burst.map((_, i) => socket.answer(i, 15_000)))
    assert.equal(answers[17].type, 'error')
    assert.equal(answers[17].error!.code, 'internal_error')
    const acked = answers.filter((a) => a.type === 'ack')
    assert.equal(acked.length, 39, JSON.stringify(answers.filter((a) => a.type !== 'ack')))
    // acknowledged means stored; the refused one is not; seqs have no hole where it failed
    for (const [n, chatId] of chats.entries()) {
      const stored = await wholeHistory(alice, chatId)
      const sent = burst.filter((_, i) => i !== 17 && i % chats.length === n).map((d) => d.content)
      assert.deepEqual(
        stored.map((m) => m.content),
        ['hello', ...sent],
        `chat ${chatId} holds what was acknowledged, in order`,
      )
      await assertGapFree(server, chatId, sent.length + 1)
    }
    // the batch ran again with each send on its own: the chats' rows hold their last message, and
    // each chat goes on from its last seq
    const list = (await alice.api.get(`${V2}/chat_list`, { query: { per_page: 10 } })).body.items as {
      chat_id: number
      last_message: { content: string }
    }[]
    for (const [n, chatId] of chats.entries()) {
      const last = burst.filter((_, i) => i !== 17 && i % chats.length === n).at(-1)!.content
      assert.equal(list.find((c) => c.chat_id === chatId)?.last_message.content, last, `chat ${chatId}'s last message`)
      const next = await socket.request('send', { chat_id: chatId, content: 'after the batch' }, `next-${n}`)
      assert.equal(next.type, 'ack', JSON.stringify(next))
      await assertGapFree(server, chatId, burst.filter((_, i) => i !== 17 && i % chats.length === n).length + 2)
    }
  } finally {
    await sql.raw(`drop trigger refuse_poison${server.ctx.dialect === 'postgres' ? ' on messages' : ''}`).execute(server.ctx.db)
    if (server.ctx.dialect === 'postgres') await sql.raw('drop function refuse_poison()').execute(server.ctx.db)
  }
})

test('concurrent sends over HTTP and the socket, retries among them: every chat gap-free, each sender in order, nothing twice', async () => {
  const users = await registerUsers(server, 8)
  const chats = new Map<string, number>()
  for (let i = 0; i < users.length; i += 2) chats.set(`${i}`, (await send(users[i], users[i + 1], 'open')).chat_id)
  const sockets = await Promise.all(users.map((u) => TestSocket.connect(server.url, u.token)))
  const perSender = 30
  const sentBy = new Map<number, string[]>()
  const work: Promise<unknown>[] = []
  users.forEach((user, u) => {
    const pairStart = u - (u % 2)
    const chatId = chats.get(`${pairStart}`)!
    const contents = Array.from({ length: perSender }, (_, k) => `${user.id}:${k}`)
    sentBy.set(user.id, contents)
    // even senders over the socket (ordered per chat by the server), odd ones over HTTP one at a time
    if (u % 2 === 0) {
      for (const [k, content] of contents.entries())
        sockets[u].send({ type: 'send', id: k, data: { chat_id: chatId, content, client_message_id: `c-${user.id}-${k}` } })
      work.push(
        Promise.all(contents.map((_, k) => sockets[u].answer(k, 20_000))).then((answers) => {
          assert.ok(
            answers.every((a) => a.type === 'ack'),
            JSON.stringify(answers.find((a) => a.type !== 'ack')),
          )
        }),
      )
    } else {
      work.push(
        (async () => {
          for (const [k, content] of contents.entries()) {
            const res = await user.api.post(`${V2}/messages/send`, { chat_id: chatId, content, client_message_id: `c-${user.id}-${k}` })
            assert.equal(res.status, 200, res.text)
          }
        })(),
      )
    }
  })
  await Promise.all(work)
  // retries of sends already made, over the other transport: answered, nothing new stored
  const retries = await Promise.all(
    users.map(async (user, u) => {
      const chatId = chats.get(`${u - (u % 2)}`)!
      return (await user.api.post(`${V2}/messages/send`, { chat_id: chatId, content: `${user.id}:3`, client_message_id: `c-${user.id}-3` }))
        .body.data.content
    }),
  )
  assert.deepEqual(
    retries,
    users.map((u) => `${u.id}:3`),
  )
  for (let i = 0; i < users.length; i += 2) {
    const chatId = chats.get(`${i}`)!
    const stored = (await wholeHistory(users[i], chatId)).map((m) => m.content as string)
    assert.equal(stored.length, 1 + 2 * perSender)
    for (const user of [users[i], users[i + 1]])
      assert.deepEqual(
        stored.filter((c) => c.startsWith(`${user.id}:`)),
        sentBy.get(user.id),
      )
    await assertGapFree(server, chatId, 1 + 2 * perSender)
  }
})

const multi = testDatabaseUrl && testRedisUrl ? false : 'needs PostgreSQL + Redis (TEST_DATABASE_URL, TEST_REDIS_URL)'

test('PostgreSQL: a batch that waited for an earlier batch of the same chat is still written as a batch', {
  skip: server.ctx.dialect !== 'postgres' && 'PostgreSQL only (TEST_DATABASE_URL)',
}, async () => {
  const [alice, bob] = await registerUsers(server, 2)
  const chatId = (await send(alice, bob, 'hello')).chat_id as number
  // what the batch path did with each send: written ('sent') or handed to the general path
  const path = batchPath(server.ctx)!
  const original = path.send
  const outcomes: string[] = []
  path.send = async (...args) => {
    const outcome = await original(...args)
    outcomes.push(outcome.kind)
    return outcome
  }
  const lockWaits = async () =>
    Number(
      (
        await sql<{
          n: string
        }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(
          server.ctx.db,
        )
      ).rows[0].n,
    )
  try {
    const sent = Array.from({ length: 45 }, (_, i) => `wave ${i}`)
    // over HTTP, all at once (a socket's sends to one chat go one after another)
    const post = (content: string) => alice.api.post(`${V2}/messages/send`, { chat_id: chatId, content })
    // Hold the chat's row: the first batch waits for it, and the second (40 sends, enough to start
    // one beside a batch in flight) waits behind the first, then reads the chat as the first left it.
    const answers = await server.ctx.db.connection().execute(async (conn) => {
      await sql`begin`.execute(conn)
      await sql`select id from chats where id = ${chatId} for update`.execute(conn)
      const first = sent.slice(0, 5).map(post)
      await waitFor(async () => (await lockWaits()) === 1 || undefined, {
        timeoutMs: 5000,
        message: 'the first batch waits for the chat row',
      })
      const second = sent.slice(5).map(post)
      await waitFor(async () => (await lockWaits()) === 2 || undefined, { timeoutMs: 5000, message: 'the second batch waits too' })
      await sql`commit`.execute(conn)
      return Promise.all([...first, ...second])
    })
    assert.deepEqual(
      answers.filter((a) => a.status !== 200).map((a) => a.text),
      [],
    )
    // the first wave's five before the second's forty, each wave in some order
    const stored = (await wholeHistory(alice, chatId)).map((m) => m.content as string)
    assert.deepEqual(stored.slice(1, 6).sort(), sent.slice(0, 5).sort())
    assert.deepEqual(stored.slice(6).sort(), sent.slice(5).sort())
    await assertGapFree(server, chatId, sent.length + 1)
    // both batches wrote their sends: none went the general way (a lock wait of its own per send)
    assert.equal(outcomes.length, sent.length)
    assert.deepEqual(
      outcomes.filter((kind) => kind !== 'sent'),
      [],
    )
  } finally {
    path.send = original
  }
})

test('PostgreSQL: a socket’s later send to a chat stays out of a second batch while its earlier one is in flight', {
  skip: server.ctx.dialect !== 'postgres' && 'PostgreSQL only (TEST_DATABASE_URL)',
}, async () => {
  const [alice, bob, carol, dave] = await registerUsers(server, 4)
  const held = (await send(alice, bob, 'hello')).chat_id as number
  const other = (await send(carol, dave, 'hello')).chat_id as number
  const socket = await TestSocket.connect(server.url, alice.token)
  const lockWaits = async () =>
    Number(
      (
        await sql<{
          n: string
        }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(
          server.ctx.db,
        )
      ).rows[0].n,
    )
  const answered = new Set<string>()
  const answer = (id: string) =>
    socket.answer(id, 20_000).then((frame) => {
      answered.add(id)
      return frame
    })
  const wave = Array.from({ length: 40 }, (_, i) => `other ${i}`)
  const { first, second } = await server.ctx.db.connection().execute(async (conn) => {
    // Hold alice's chat row: the batch holding her first send waits for it.
    await sql`begin`.execute(conn)
    await sql`select id from chats where id = ${held} for update`.execute(conn)
    socket.send({ type: 'send', id: 's1', data: { chat_id: held, content: 'first' } })
    const first = answer('s1')
    await waitFor(async () => (await lockWaits()) === 1 || undefined, {
      timeoutMs: 5000,
      message: 'the first batch waits for the chat row',
    })
    // Her next send to that chat queues behind the first at once (pipelined), and enough sends of
    // another chat queue beside it to start a second batch. That batch must leave her send out:
    // it waits for the batch of the first, so the second batch (carol's sends) goes on without it.
    socket.send({ type: 'send', id: 's2', data: { chat_id: held, content: 'second' } })
    const second = answer('s2')
    const others = await Promise.all(wave.map((content) => carol.api.post(`${V2}/messages/send`, { chat_id: other, content })))
    assert.deepEqual(
      others.filter((a) => a.status !== 200).map((a) => a.text),
      [],
      'the second batch was written while the row was held',
    )
    assert.deepEqual([...answered], [], 'neither of alice’s sends is answered while her chat’s row is held')
    await sql`commit`.execute(conn)
    return { first: await first, second: await second }
  })
  assert.equal(first.type, 'ack', JSON.stringify(first))
  assert.equal(second.type, 'ack', JSON.stringify(second))
  assert.deepEqual(
    (await wholeHistory(alice, held)).map((m) => m.content),
    ['hello', 'first', 'second'],
  )
  assert.equal((await wholeHistory(carol, other)).length, wave.length + 1, 'the second batch stored every send of the other chat')
  await assertGapFree(server, held, 3)
})

test('two instances on one PostgreSQL batch sends to the same chats at once: seqs and update logs gap-free, every frame once', {
  skip: multi,
}, async () => {
  const env = {
    REDIS_PREFIX: `tern-test-${randomBytes(6).toString('hex')}:`,
    WS_FRAME_RATE_LIMIT: '10000/1',
    WRITE_RATE_LIMIT_USER: '1000000/60',
  }
  const one = await startTestServer({ env })
  const two = await startTestServer({ database: one.database, env })
  try {
    const [alice, bob, carol] = await registerUsers(one, 3)
    const ab = (await send(alice, bob, 'open ab')).chat_id as number
    const ac = (await send(alice, carol, 'open ac')).chat_id as number
    const bobWatch = await TestSocket.connect(one.url, bob.token)
    // alice sends to both chats from a socket on each instance at once; bob and carol answer alice from the other
    const senders = [
      { socket: await TestSocket.connect(one.url, alice.token), chatId: ab, tag: 'a1' },
      { socket: await TestSocket.connect(two.url, alice.token), chatId: ac, tag: 'a2' },
      { socket: await TestSocket.connect(two.url, carol.token), chatId: ac, tag: 'c2' },
      { socket: await TestSocket.connect(one.url, bob.token), chatId: ab, tag: 'b1' },
    ]
    const count = 60
    for (let k = 0; k < count; k++)
      for (const s of senders) s.socket.send({ type: 'send', id: k, data: { chat_id: s.chatId, content: `${s.tag}:${k}` } })
    for (const s of senders) {
      const answers = await Promise.all(Array.from({ length: count }, (_, k) => s.socket.answer(k, 30_000)))
      assert.ok(
        answers.every((a) => a.type === 'ack'),
        `${s.tag}: ${JSON.stringify(answers.find((a) => a.type !== 'ack'))}`,
      )
    }
    for (const chatId of [ab, ac]) {
      const stored = (await wholeHistory(alice, chatId)).map((m) => m.content as string)
      assert.equal(stored.length, 1 + 2 * count)
      for (const s of senders.filter((s) => s.chatId === chatId)) {
        assert.deepEqual(
          stored.filter((c) => c.startsWith(`${s.tag}:`)),
          Array.from({ length: count }, (_, k) => `${s.tag}:${k}`),
          `${s.tag} in order`,
        )
      }
      await assertGapFree(one, chatId, 1 + 2 * count)
    }
    // each user's update log: seqs 1..n, and bob's socket got every message.new of his chat once, in seq order
    for (const user of [alice, bob, carol]) {
      const res = await user.api.get(`${V2}/updates`, { query: { since: 0, limit: 1000 } })
      const seqs = (res.body.data.updates as { seq: number }[]).map((u) => u.seq)
      assert.deepEqual(
        seqs,
        Array.from({ length: seqs.length }, (_, i) => i + 1),
        `user ${user.id}'s log is gap-free`,
      )
    }
    const frames = []
    for (let i = 0; i < 2 * count; i++) frames.push(await bobWatch.next('message.new', 10_000))
    const seqs = frames.map((f) => f.seq!)
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
    )
    assert.equal(new Set(frames.map((f) => f.data.message.message_id)).size, 2 * count)
  } finally {
    await two.close()
    await one.close()
  }
})
