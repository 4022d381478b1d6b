/**
 * Two instances sharing one PostgreSQL database and one Redis: frames published on either reach
 * sockets on both, once and in order, and resume works across a switch of instance.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { Redis } from 'ioredis'
import { testDatabaseUrl, testRedisUrl } from '../harness/database.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { assertOpeningsInOrder, TestSocket, type Frame } from '../harness/socket.js'
import { sleep } from '../harness/wait.js'

const V2 = '/api.v2/api'
const skip = testDatabaseUrl && testRedisUrl ? false : 'needs PostgreSQL + Redis (TEST_DATABASE_URL, TEST_REDIS_URL)'

async function startPair() {
  // One prefix for both, so they share the fan-out channel (the harness gives each server its own).
  const env = { REDIS_PREFIX: `tern-test-${randomBytes(6).toString('hex')}:` }
  const one = await startTestServer({ env })
  const two = await startTestServer({ database: one.database, env })
  return { one, two }
}
const pair = skip ? null : await startPair()

/** A test that gets both instances; skipped, with the reason, without PostgreSQL + Redis. */
function multi(name: string, fn: (one: TestServer, two: TestServer) => Promise<void>) {
  test(name, { skip }, () => fn(pair!.one, pair!.two))
}

const connect = (server: TestServer, token: string) => TestSocket.connect(server.url, token)

/** Takes `count` message.new frames, then checks that nothing else (no duplicate) follows. */
async function takeMessages(socket: TestSocket, count: number) {
  const frames = []
  for (let i = 0; i < count; i++) frames.push(await socket.next('message.new'))
  assert.deepEqual(await socket.drain('message.new'), [], 'nothing twice')
  return frames
}

/**
 * The user's message.new updates after `since`, read from the update log through `server`: what
 * every socket must have received (a chat's creation may log other updates in between).
 */
async function loggedMessages(server: TestServer, user: TestUser, since = 0) {
  const res = await server.api.as(user.token).get(`${V2}/updates`, { query: { since, limit: 1000 } })
  assert.equal(res.status, 200)
  return (res.body.data.updates as Frame[]).filter((u) => u.type === 'message.new')
}

/**
 * A logged message.new is the message as it is now (realtime/updates.ts), so once a device has
 * received it, the log shows when: frames are compared without delivered_at.
 */
function undelivered<T extends Frame | Frame[]>(frames: T): T {
  const strip = (f: Frame) => ({ ...f, data: { ...f.data, message: { ...f.data.message, delivered_at: null } } })
  return (Array.isArray(frames) ? frames.map(strip) : strip(frames as Frame)) as T
}

multi("a message sent through one instance reaches the receiver and the sender's device on the other", async (one, two) => {
  const [alice, bob] = [await one.registerUser(), await one.registerUser()]
  const bobOnTwo = await connect(two, bob.token)
  const bobOnOne = await connect(one, bob.token)
  const login = await two.api.post(`${V2}/auth/login`, { login: alice.username, password: alice.password })
  const alicePhoneOnTwo = await connect(two, login.body.data.session_token)

  const sent = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'across instances' })
  assert.equal(sent.status, 200)
  const [logged] = await loggedMessages(one, bob)
  assert.deepEqual(undelivered(logged).data.message, sent.body.data)
  const [remote] = await takeMessages(bobOnTwo, 1)
  const [local] = await takeMessages(bobOnOne, 1)
  assert.deepEqual(undelivered(remote), undelivered(logged), 'the logged update, seq and all, on the other instance')
  assert.deepEqual(undelivered(local), undelivered(logged))
  const [own] = await takeMessages(alicePhoneOnTwo, 1)
  assert.deepEqual(undelivered(own), undelivered((await loggedMessages(one, alice))[0]))
  assert.equal(own.data.message.message_id, sent.body.data.message_id)
})

multi('messages sent alternately through both instances reach sockets on both once each, in order', async (one, two) => {
  const [alice, bob] = [await one.registerUser(), await one.registerUser()]
  const senders = [alice.api, two.api.as(alice.token)]
  const receivers = [await connect(two, bob.token), await connect(one, bob.token)]
  for (let i = 1; i <= 20; i++) {
    const res = await senders[i % 2].post(`${V2}/messages/send`, { receiver_id: bob.id, content: `n${i}` })
    assert.equal(res.status, 200)
  }
  const logged = await loggedMessages(two, bob)
  assert.deepEqual(
    logged.map((u) => u.data.message.content),
    Array.from({ length: 20 }, (_, i) => `n${i + 1}`),
  )
  for (const socket of receivers) {
    const frames = await takeMessages(socket, 20)
    assert.deepEqual(
      frames.map((f) => f.seq),
      logged.map((u) => u.seq),
    )
    assert.deepEqual(undelivered(frames), undelivered(logged))
  }
})

multi('resume on the other instance replays exactly what was missed, then continues live', async (one, two) => {
  const [alice, bob] = [await one.registerUser(), await one.registerUser()]
  const aliceOnTwo = two.api.as(alice.token)
  const first = await connect(one, bob.token)
  for (const content of ['seen 1', 'seen 2']) await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content })
  const seen = await takeMessages(first, 2)
  const last = seen[1].seq as number
  await first.close()

  for (const content of ['missed 1', 'missed 2', 'missed 3']) {
    await aliceOnTwo.post(`${V2}/messages/send`, { receiver_id: bob.id, content })
  }
  const missed = await loggedMessages(two, bob, last)
  assert.deepEqual(
    missed.map((u) => u.data.message.content),
    ['missed 1', 'missed 2', 'missed 3'],
  )
  const second = await connect(two, bob.token)
  second.send({ type: 'resume', seq: last })
  assert.deepEqual(undelivered(await takeMessages(second, 3)), undelivered(missed))

  await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'live via one' })
  const [live] = await takeMessages(second, 1)
  assert.equal(live.data.message.content, 'live via one')
  assert.ok((live.seq as number) > (missed[2].seq as number))
})

multi('GET updates on one instance returns what was sent through the other', async (one, two) => {
  const [alice, bob] = [await one.registerUser(), await one.registerUser()]
  const sent = []
  for (const content of ['logged 1', 'logged 2']) {
    sent.push((await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content })).body.data)
  }
  const res = await two.api.as(bob.token).get(`${V2}/updates`, { query: { since: 0 } })
  assert.equal(res.status, 200)
  const messages = (res.body.data.updates as Frame[]).filter((u) => u.type === 'message.new')
  assert.deepEqual(
    messages.map((u) => u.data.message),
    sent,
  )
  assert.equal(res.body.data.seq, res.body.data.updates.at(-1).seq)
})

/**
 * Cuts both instances' fan-out subscriber connections (they share the prefix; ioredis reconnects
 * by itself) and runs `during`. `away()` says whether neither has subscribed again yet, so that a
 * frame published before it returned true was lost for both. Ends once both are back, whatever
 * happened, so that the next tests have both instances subscribed.
 */
async function whileSubscribersCut(server: TestServer, during: (away: () => Promise<boolean>) => Promise<void>) {
  const name = `name=${server.ctx.config.redisPrefix}fanout:subscriber`
  const admin = new Redis(testRedisUrl!)
  const subscribers = async () =>
    String(await admin.client('LIST'))
      .split('\n')
      .filter((line) => line.includes(name))
  const subscribed = async () => (await subscribers()).filter((line) => / sub=[1-9]/.test(line)).length
  try {
    const clients = await subscribers()
    assert.equal(clients.length, 2, 'one subscriber per instance')
    for (const line of clients) await admin.client('KILL', 'ID', /id=(\d+)/.exec(line)![1])
    await during(async () => (await subscribed()) === 0)
  } finally {
    const deadline = Date.now() + 5000
    while ((await subscribed()) < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    admin.disconnect()
  }
}

/**
 * Watches the pair's fan-out channel (subscribed once this resolves); `seen` settles with the
 * first envelope that `match` accepts, or fails after `timeoutMs`. The watcher goes either way.
 */
async function published(
  server: TestServer,
  match: (envelope: { deliveries?: { userId?: number; frame: Frame }[] }) => boolean,
  timeoutMs = 5000,
) {
  const observer = new Redis(testRedisUrl!)
  const channel = `${server.ctx.config.redisPrefix}fanout`
  await observer.subscribe(channel)
  let timer: NodeJS.Timeout | undefined
  const seen = new Promise<void>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`nothing matching was published within ${timeoutMs} ms`)), timeoutMs)
    observer.on('message', (from: string, raw: string) => {
      if (from === channel && match(JSON.parse(raw))) resolve()
    })
  })
  return {
    seen: seen.finally(() => {
      clearTimeout(timer)
      observer.disconnect()
    }),
  }
}

multi('frames published while pub/sub reconnects are replayed from the log once it is back', async (one, two) => {
  const [alice, bob] = [await one.registerUser(), await one.registerUser()]
  await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'before' })
  const bobOnTwo = await connect(two, bob.token)
  await whileSubscribersCut(one, async () => {
    // Sent through instance one while instance two is unsubscribed: the nudge to two is lost.
    const sent = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'during the cut' })
    const frame = await bobOnTwo.next('message.new', 5000)
    assert.equal(frame.data.message.message_id, sent.body.data.message_id)
    assert.deepEqual(await bobOnTwo.drain('message.new'), [], 'nothing twice')
  })
})

multi("presence that changes while pub/sub is cut reaches the other instance's sockets once it is back", async (one, two) => {
  const [alice, bob] = [await one.registerUser(), await one.registerUser()]
  await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'hi' })
  const bobOnTwo = await connect(two, bob.token)
  // The change must be published inside the cut for the test to mean anything: tried until it is.
  for (let attempt = 1; ; attempt++) {
    const aliceOnOne = await connect(one, alice.token)
    // a late repair from the previous attempt may still say offline: skipped
    let online: Frame
    do online = await bobOnTwo.next('presence')
    while (online.data.is_online !== true)
    const offline = await published(
      one,
      (e) => e.deliveries?.some((d) => d.userId === bob.id && d.frame.type === 'presence' && d.frame.data.is_online === false) ?? false,
    )
    let lost = false
    await whileSubscribersCut(one, async (away) => {
      await aliceOnOne.close()
      await offline.seen
      lost = await away()
      const frame = await bobOnTwo.next('presence', 5000)
      assert.deepEqual([frame.data.user_id, frame.data.is_online], [alice.id, false])
      assert.ok(frame.data.last_seen)
      // the repair may repeat what arrived live, but nothing says she is back
      for (const later of await bobOnTwo.drain('presence', 300)) assert.equal(later.data.is_online, false)
    })
    if (lost) break
    assert.ok(attempt < 5, 'the presence change was never published while both subscribers were away')
  }
})

/**
 * Runs `fn` with a third instance on the pair's database and channel, connected to Redis as a
 * user of its own, so that `restrict('-publish')` (an ACL rule) refuses it commands without
 * touching anyone else.
 */
async function withOwnRedisUser(one: TestServer, fn: (three: TestServer, restrict: (rule: string) => Promise<unknown>) => Promise<void>) {
  const user = `tern-test-${randomBytes(6).toString('hex')}`
  const admin = new Redis(testRedisUrl!)
  await admin.acl('SETUSER', user, 'on', '>secret', '~*', '&*', '+@all')
  const url = new URL(testRedisUrl!)
  url.username = user
  url.password = 'secret'
  try {
    const three = await startTestServer({ database: one.database, env: { REDIS_URL: url.href, REDIS_PREFIX: one.ctx.config.redisPrefix } })
    try {
      await fn(three, (rule) => admin.acl('SETUSER', user, rule))
    } finally {
      await three.close()
    }
  } finally {
    await admin.acl('DELUSER', user)
    admin.disconnect()
  }
}

multi('an instance whose publish failed has the others catch up from the log', (one, two) =>
  withOwnRedisUser(one, async (three, restrict) => {
    const [alice, bob] = [await three.registerUser(), await three.registerUser()]
    await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'before' })
    const bobOnTwo = await connect(two, bob.token)
    await restrict('-publish')
    const sent = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'while PUBLISH is refused' })
    assert.equal(sent.status, 200, 'the send itself succeeds: the log has it')
    assert.deepEqual(await bobOnTwo.drain('message.new', 300), [], 'the nudge was lost')
    await restrict('+publish')
    const frame = await bobOnTwo.next('message.new', 5000)
    assert.equal(frame.data.message.message_id, sent.body.data.message_id)
    assert.deepEqual(await bobOnTwo.drain('message.new'), [], 'nothing twice')
  }),
)

multi('a presence change Redis refused is retried, and reaches the peers once Redis takes it', (one, two) =>
  withOwnRedisUser(one, async (three, restrict) => {
    const [alice, bob] = [await three.registerUser(), await three.registerUser()]
    await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'hi' })
    const bobOnTwo = await connect(two, bob.token)
    // an instance records that it holds a user in a MULTI … EXEC
    await restrict('-exec')
    const aliceOnThree = await connect(three, alice.token)
    assert.deepEqual(await bobOnTwo.drain('presence', 300), [], 'the change failed: nobody was told')
    await restrict('+exec')
    const online = await bobOnTwo.next('presence', 5000)
    assert.deepEqual([online.data.user_id, online.data.is_online], [alice.id, true])
    const list = await two.api.as(bob.token).get(`${V2}/chat_list`)
    assert.equal(list.status, 200)
    const withAlice = list.body.items.find((item: Frame['data']) => item.peer.user_id === alice.id)
    assert.equal(withAlice.peer.is_online, true, 'the user row says online too')
    // and the way back: a refused leave is retried as well
    await restrict('-exec')
    await aliceOnThree.close()
    assert.deepEqual(await bobOnTwo.drain('presence', 300), [])
    await restrict('+exec')
    const offline = await bobOnTwo.next('presence', 5000)
    assert.deepEqual([offline.data.user_id, offline.data.is_online], [alice.id, false])
    assert.ok(offline.data.last_seen)
  }),
)

multi(
  'a socket opened on one instance while messages and presence flow through the other says ready first, then only what follows its seq',
  async (one, two) => {
    const [alice, bob] = [await one.registerUser(), await one.registerUser()]
    await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'first' })
    let sent = 0
    await assertOpeningsInOrder(
      () => connect(two, bob.token),
      [
        () => alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: `flow ${++sent}` }),
        // alice comes and goes: presence frames (no seq) for bob
        async () => (await connect(one, alice.token)).close(),
      ],
    )
  },
)

multi('presence spans instances: online with the first socket anywhere, offline after the last', async (one, two) => {
  const [alice, bob] = [await one.registerUser(), await one.registerUser()]
  await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'hi' })
  const bobOnOne = await connect(one, bob.token)
  const aliceOnTwo = await TestSocket.connect(two.url, alice.token)
  const online = await bobOnOne.next('presence')
  assert.deepEqual([online.data.user_id, online.data.is_online, online.seq], [alice.id, true, undefined])
  const aliceOnOne = await TestSocket.connect(one.url, alice.token)
  await aliceOnTwo.close()
  assert.deepEqual(await bobOnOne.drain('presence', 300), [], 'a socket on the other instance keeps her online')
  await aliceOnOne.close()
  const offline = await bobOnOne.next('presence')
  assert.equal(offline.data.is_online, false)
  assert.ok(offline.data.last_seen)
})

multi('a typing refresh through the other instance pushes the expiry back (no stale "stopped")', async (one, two) => {
  const [alice, bob] = [await one.registerUser(), await one.registerUser()]
  const chatId = (await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'hi' })).body.data.chat_id
  const bobSocket = await connect(one, bob.token)
  const started = Date.now()
  await alice.api.post(`${V2}/chat/typing`, { chat_id: chatId, is_typing: true })
  assert.equal((await bobSocket.next('typing')).data.is_typing, true)
  await new Promise((resolve) => setTimeout(resolve, 3000))
  await two.api.as(alice.token).post(`${V2}/chat/typing`, { chat_id: chatId, is_typing: true })
  assert.equal((await bobSocket.next('typing')).data.is_typing, true)
  const stopped = await bobSocket.next('typing', 8000)
  assert.equal(stopped.data.is_typing, false)
  const elapsed = Date.now() - started
  assert.ok(elapsed >= 7500, `expired ${elapsed} ms after the first typing; the refresh at 3 s should hold it to ~8 s`)
})

multi('a group post made through one instance reaches members on both; a member resumes the group on the other', async (one, two) => {
  const [owner, member] = [await one.registerUser(), await one.registerUser()]
  const created = await one.api.as(owner.token).post(`${V2}/groups/create`, { title: 'Across', member_ids: [member.id] })
  assert.equal(created.status, 200, created.text)
  const chatId = created.body.data.group_id
  const onTwo = await connect(two, member.token)
  const onOne = await connect(one, member.token)
  const sent = await owner.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'to the group' })
  assert.equal(sent.status, 200, sent.text)
  const [remote] = await takeMessages(onTwo, 1)
  const [local] = await takeMessages(onOne, 1)
  assert.equal(remote.data.message.content, 'to the group')
  assert.deepEqual(remote, local, 'the same chat event, chat_seq and all, on both instances')
  const cursor = (remote as { chat_seq?: number }).chat_seq!
  await onTwo.close()

  // missed while away, posted through both instances; the member comes back on the other one
  await two.api.as(owner.token).post(`${V2}/messages/send`, { chat_id: chatId, content: 'missed via two' })
  await owner.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'missed via one' })
  await takeMessages(onOne, 2)
  const back = await connect(one, member.token)
  back.send({ type: 'resume', chats: { [chatId]: cursor } })
  const replayed = await takeMessages(back, 2)
  assert.deepEqual(
    replayed.map((f) => f.data.message.content),
    ['missed via two', 'missed via one'],
  )
  await two.api.as(owner.token).post(`${V2}/messages/send`, { chat_id: chatId, content: 'live' })
  assert.equal((await takeMessages(back, 1))[0].data.message.content, 'live')
})

multi('someone added to a group through one instance follows it at once on a socket held by the other', async (one, two) => {
  const [owner, newcomer] = [await one.registerUser(), await one.registerUser()]
  const created = await owner.api.post(`${V2}/groups/create`, { title: 'Growing' })
  const chatId = created.body.data.group_id
  const socket = await connect(two, newcomer.token)
  const added = await owner.api.post(`${V2}/groups/add-member`, { chat_id: chatId, user_id: newcomer.id })
  assert.equal(added.status, 200, added.text)
  const joined = await socket.next('member.joined')
  assert.equal(joined.data.user_id, newcomer.id)
  await owner.api.post(`${V2}/messages/send`, { chat_id: chatId, content: 'welcome' })
  assert.equal((await takeMessages(socket, 1))[0].data.message.content, 'welcome')
})

test('an instance holding a user keeps the presence key alive past its TTL (heartbeats renew the key, not only the entry)', {
  skip,
}, async () => {
  // 1 s heartbeats: the hold lapses after 3 s unless each heartbeat renews it
  const env = { WS_HEARTBEAT_SECONDS: '1' }
  const one = await startTestServer({ database: pair!.one.database, env })
  const redis = new Redis(testRedisUrl!)
  try {
    const alice = await one.registerUser()
    const socket = await connect(one, alice.token)
    const key = `${one.ctx.config.redisPrefix}presence:${alice.id}`
    await sleep(4500)
    const ttl = await redis.pttl(key)
    assert.ok(ttl > 0 && ttl <= 3000, `the key still expires, and was renewed (PTTL ${ttl} ms)`)
    assert.equal(await redis.zcard(key), 1, 'this instance still holds alice')
    await socket.close()
  } finally {
    redis.disconnect()
    await one.close()
  }
})
