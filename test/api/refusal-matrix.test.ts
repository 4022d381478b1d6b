/**
 * The refusal matrix: who may post where, run as generated scripts through the common send path
 * (SQLite's fast path, PostgreSQL's batches) and through the general path (SEND_FAST_PATH=off).
 *
 * Each script sets up a sender and a peer with a personal chat, a channel the sender only
 * subscribes to, a group the sender left and a third user's chat to reply across, then plays
 * steps drawn by fast-check: sends (by chat or by receiver, replies to a message of the chat, of
 * another chat or deleted for everyone, retries of a client id with the same or other content),
 * blocks and unblocks either way, a ban and unban of the peer, the peer deleting their account.
 * Both servers see the same instants, so they must agree on every answer, every frame and every
 * row; and a small model of the rules says what each answer must be, so a rule broken for both
 * paths at once fails too.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import test from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import fc from 'fast-check'
import { commonSendPath } from '../../src/modules/messages/service.js'
import type { Client } from '../harness/client.js'
import { V2 } from '../harness/messaging.js'
import { rowsOf, ScriptClock } from '../harness/parity.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const ADMIN = '/api/admin'
const RUNS = Number(process.env.REFUSAL_RUNS ?? 8)

type Who = 'me' | 'peer'
type Step =
  | {
      kind: 'send'
      by: Who
      via: 'chat' | 'receiver'
      reply: 'none' | 'own' | 'foreign' | 'deleted'
      client: 'none' | 'fresh' | 'same' | 'other'
    }
  | { kind: 'block' | 'unblock'; by: Who }
  | { kind: 'ban' | 'unban' | 'delete-peer' | 'channel-post' | 'group-post' }

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('send' as const),
      by: fc.constantFrom<Who>('me', 'peer'),
      via: fc.constantFrom('chat' as const, 'receiver' as const),
      reply: fc.constantFrom('none' as const, 'own' as const, 'foreign' as const, 'deleted' as const),
      client: fc.constantFrom('none' as const, 'fresh' as const, 'same' as const, 'other' as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constantFrom('block' as const, 'unblock' as const), by: fc.constantFrom<Who>('me', 'peer') }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom('ban' as const, 'unban' as const, 'delete-peer' as const, 'channel-post' as const, 'group-post' as const),
    }),
  },
)

/** What the rules say a step must answer, from what the script did so far; null where the model does not say. */
interface Model {
  blocked: Record<Who, boolean>
  banned: boolean
  deleted: boolean
  /** a ban or a deletion ends the peer's sessions: an unban does not bring them back */
  peerSignedOut: boolean
  /** the last client id sent and whether that send was stored */
  lastClient: { body: Record<string, unknown>; stored: boolean } | null
}

function expected(model: Model, step: Step): number[] | null {
  switch (step.kind) {
    case 'channel-post':
    case 'group-post':
      return [403, 404]
    case 'ban':
    case 'unban':
      return model.deleted ? [404] : [200]
    case 'delete-peer':
      return model.peerSignedOut ? [401] : [200]
    case 'block':
    case 'unblock':
      if (step.by === 'peer' && model.peerSignedOut) return [401]
      if (step.by === 'me' && model.deleted) return null
      return [200]
    case 'send': {
      const { by, via, reply, client } = step
      if (by === 'peer' && model.peerSignedOut) return [401]
      const other: Who = by === 'me' ? 'peer' : 'me'
      if ((client === 'same' || client === 'other') && by === 'me') {
        if (!model.lastClient) return null
        // a retry answers the first send's outcome; other content under the same id is a conflict
        if (model.lastClient.stored) return client === 'same' ? [200] : [409]
        return null
      }
      if (by === 'me' && via === 'receiver' && (model.banned || model.deleted)) return [404]
      if (model.blocked[other]) return [403]
      if (by === 'me' && (model.banned || model.deleted)) return null
      if (reply === 'foreign' || reply === 'deleted') return [400]
      return [200]
    }
  }
}

interface Fixture {
  me: TestUser
  peer: TestUser
  third: TestUser
  chatId: number
  /** a message of the personal chat, of another chat, and one deleted for everyone */
  own: number
  foreign: number
  deleted: number
  channelId: number
  groupId: number
  sockets: TestSocket[]
}

/** The users and chats a script starts from, made the same way on both servers. */
async function setUp(server: TestServer, tick: () => void, names: string[]): Promise<Fixture> {
  const register = async (username: string) => {
    tick()
    return server.registerUser({ username })
  }
  const [me, peer, third] = [await register(names[0]), await register(names[1]), await register(names[2])]
  const post = async (api: Client, path: string, body: Record<string, unknown>) => {
    tick()
    const res = await api.post(`${V2}${path}`, body)
    assert.ok(res.status === 200 || res.status === 201, `${path}: ${res.status} ${res.text}`)
    return res.body.data
  }
  const opening = await post(me.api, '/messages/send', { receiver_id: peer.id, content: 'hello' })
  const chatId = opening.chat_id as number
  const gone = await post(me.api, '/messages/send', { chat_id: chatId, content: 'soon gone' })
  tick()
  assert.equal((await me.api.delete(`${V2}/messages/${gone.message_id}`, { query: { for_all: 'true' } })).status, 200)
  const elsewhere = await post(third.api, '/messages/send', { receiver_id: me.id, content: 'from elsewhere' })
  const channel = await post(third.api, '/channels/create', { title: 'news' })
  await post(me.api, '/channels/subscribe', { channel_id: channel.channel_id })
  const group = await post(third.api, '/groups/create', { title: 'club', member_ids: [me.id] })
  await post(me.api, '/groups/leave', { chat_id: group.group_id })
  const sockets = [await TestSocket.connect(server.url, me.token), await TestSocket.connect(server.url, peer.token)]
  return {
    me,
    peer,
    third,
    chatId,
    own: opening.message_id,
    foreign: elsewhere.message_id,
    deleted: gone.message_id,
    channelId: channel.channel_id,
    groupId: group.group_id,
    sockets,
  }
}

/** Plays a script on one server: every answer (status, body) and every frame the two sockets got. */
async function play(server: TestServer, admin: TestUser, clock: ScriptClock, steps: Step[], names: string[], check: boolean) {
  const tick = () => (clock.at += 1000)
  const f = await setUp(server, tick, names)
  const model: Model = { blocked: { me: false, peer: false }, banned: false, deleted: false, peerSignedOut: false, lastClient: null }
  const answers: { step: Step; status: number; body: unknown }[] = []
  let clientSeq = 0
  for (const step of steps) {
    tick()
    let res: { status: number; body: unknown; text: string }
    const user = (who: Who) => (who === 'me' ? f.me : f.peer)
    switch (step.kind) {
      case 'send': {
        const from = user(step.by)
        let body: Record<string, unknown> =
          step.via === 'chat' ? { chat_id: f.chatId } : { receiver_id: user(step.by === 'me' ? 'peer' : 'me').id }
        body.content = `${step.by} says ${answers.length}`
        if (step.reply !== 'none') body.reply_to_id = f[step.reply]
        if (step.client === 'fresh') body.client_message_id = `c${++clientSeq}`
        // a retry is the last send with a client id again, by the same sender (the other one's id is theirs alone)
        const retry = (step.client === 'same' || step.client === 'other') && model.lastClient && step.by === 'me' ? model.lastClient : null
        if (retry) body = step.client === 'same' ? retry.body : { ...retry.body, content: `${retry.body.content} (changed)` }
        res = await from.api.post(`${V2}/messages/send`, body)
        if (step.client === 'fresh' && step.by === 'me') model.lastClient = { body, stored: res.status === 200 }
        break
      }
      case 'block':
      case 'unblock': {
        const other = step.by === 'me' ? f.peer : f.me
        res = await user(step.by).api.post(`${V2}/${step.kind}`, { user_id: other.id })
        break
      }
      case 'ban':
      case 'unban':
        res = await admin.api.post(`${ADMIN}/users/${f.peer.id}/${step.kind}`, step.kind === 'ban' ? { reason: 'matrix' } : {})
        break
      case 'delete-peer':
        res = await f.peer.api.post(`${V2}/auth/delete-account`, { password: f.peer.password })
        break
      case 'channel-post':
        res = await f.me.api.post(`${V2}/messages/send`, { chat_id: f.channelId, content: 'as a subscriber' })
        break
      case 'group-post':
        res = await f.me.api.post(`${V2}/messages/send`, { chat_id: f.groupId, content: 'after leaving' })
        break
    }
    if (check) {
      const want = expected(model, step)
      if (want)
        assert.ok(
          want.includes(res.status),
          `${JSON.stringify(step)} answered ${res.status} (the rules say ${want.join(' or ')}): ${res.text}`,
        )
    }
    if (res.status === 200) {
      if (step.kind === 'block' || step.kind === 'unblock') model.blocked[step.by] = step.kind === 'block'
      if (step.kind === 'ban' || step.kind === 'unban') model.banned = step.kind === 'ban'
      if (step.kind === 'delete-peer') model.deleted = true
      if (step.kind === 'ban' || step.kind === 'delete-peer') model.peerSignedOut = true
    }
    answers.push({ step, status: res.status, body: res.body })
    // delivery stamps land within 20 ms of a frame: let them, before time moves on
    await sleep(50)
  }
  await sleep(100)
  return { answers, frames: f.sockets.map((socket) => socket.received) }
}

const TABLES = ['messages', 'chats', 'chat_members', 'scheduled_messages', 'blocked_users'] as const

test('refusal matrix: generated scripts answer by the rules, alike through the common send path and the general path', async () => {
  const clocks = [new ScriptClock(), new ScriptClock()]
  const common = await startTestServer({ clock: clocks[0] })
  const general = await startTestServer({ clock: clocks[1], env: { SEND_FAST_PATH: 'off' } })
  assert.equal(commonSendPath(general.ctx), null, 'SEND_FAST_PATH=off turns the common path off')
  const path = commonSendPath(common.ctx)
  assert.ok(path, 'the common path is on by default')
  let commonSends = 0
  const send = path.send
  path.send = async (...args) => {
    const outcome = await send(...args)
    if (outcome.kind !== 'general') commonSends++
    return outcome
  }
  const admins = [await common.createAdmin(), await general.createAdmin()]
  const statuses = new Map<number, number>()
  const prefix = randomBytes(3).toString('hex')
  let run = 0

  // every refusal the matrix names, in one script, before the generated ones
  const covering: Step[] = [
    { kind: 'send', by: 'me', via: 'chat', reply: 'own', client: 'fresh' },
    { kind: 'send', by: 'me', via: 'chat', reply: 'none', client: 'same' },
    { kind: 'send', by: 'me', via: 'chat', reply: 'none', client: 'other' },
    { kind: 'send', by: 'me', via: 'chat', reply: 'foreign', client: 'none' },
    { kind: 'send', by: 'me', via: 'receiver', reply: 'deleted', client: 'none' },
    { kind: 'channel-post' },
    { kind: 'group-post' },
    { kind: 'block', by: 'peer' },
    { kind: 'send', by: 'me', via: 'chat', reply: 'none', client: 'none' },
    { kind: 'send', by: 'me', via: 'receiver', reply: 'none', client: 'fresh' },
    { kind: 'unblock', by: 'peer' },
    { kind: 'block', by: 'me' },
    { kind: 'send', by: 'peer', via: 'chat', reply: 'none', client: 'none' },
    { kind: 'unblock', by: 'me' },
    { kind: 'send', by: 'peer', via: 'receiver', reply: 'own', client: 'none' },
    { kind: 'ban' },
    // the chat read first, so that nothing unread sends the next one the general way
    { kind: 'send', by: 'me', via: 'chat', reply: 'none', client: 'none' },
    { kind: 'send', by: 'me', via: 'receiver', reply: 'none', client: 'none' },
    { kind: 'send', by: 'peer', via: 'chat', reply: 'none', client: 'none' },
    { kind: 'unban' },
    { kind: 'send', by: 'me', via: 'receiver', reply: 'none', client: 'fresh' },
  ]
  // and a deleted peer
  const deleting: Step[] = [
    { kind: 'send', by: 'peer', via: 'chat', reply: 'none', client: 'none' },
    { kind: 'delete-peer' },
    { kind: 'send', by: 'me', via: 'chat', reply: 'own', client: 'none' },
    { kind: 'send', by: 'me', via: 'receiver', reply: 'none', client: 'none' },
    { kind: 'ban' },
  ]

  await fc.assert(
    fc.asyncProperty(fc.array(stepArb, { minLength: 4, maxLength: 12 }), async (steps) => {
      const names = ['me', 'peer', 'third'].map((who) => `${who}${++run}_${prefix}`)
      const a = await play(common, admins[0], clocks[0], steps, names, true)
      const b = await play(general, admins[1], clocks[1], steps, names, false)
      for (const answer of a.answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
      assert.deepEqual(a.answers, b.answers, 'both paths answer alike')
      assert.deepEqual(a.frames, b.frames, 'both paths deliver the same frames')
      const [rowsA, rowsB] = [await rowsOf(common, TABLES, ['invite_code']), await rowsOf(general, TABLES, ['invite_code'])]
      for (const table of Object.keys(rowsA)) assert.deepEqual(rowsA[table], rowsB[table], `${table} rows agree`)
    }),
    { numRuns: RUNS, examples: [[covering], [deleting]], endOnFailure: true },
  )

  // the matrix compared something: sends went through the common path, and each refusal occurred
  assert.ok(commonSends >= RUNS, `the common path stored ${commonSends} sends`)
  for (const status of [200, 400, 401, 403, 404, 409])
    assert.ok((statuses.get(status) ?? 0) > 0, `some step answered ${status}: ${JSON.stringify([...statuses])}`)
  await Promise.all([common.close(), general.close()])
})
