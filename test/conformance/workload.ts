/**
 * What the clients do over HTTP during a conformance run: register, open personal chats, make
 * groups and a channel, then send M messages there with edits, deletes (for everyone and for me),
 * reactions and reads, through a random live instance each time. A request cut by an instance's
 * death is retried (elsewhere, or once it is back): a send with the same client_message_id, so
 * that a send that committed before the kill is not sent twice.
 */
import { randomBytes } from 'node:crypto'
import type { Cluster } from './cluster.js'

export const V2 = '/api.v2/api'
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export interface Reply {
  status: number
  body: any
  /** an earlier attempt of this request was cut (the instance died): it may have landed */
  retried: boolean
}

/**
 * A request to a random live instance, retried while instances are down or die under it (for up
 * to 90 s). Answers the first HTTP response.
 */
export async function request(cluster: Cluster, token: string | null, method: string, path: string, body?: unknown): Promise<Reply> {
  const deadline = Date.now() + 90_000
  let retried = false
  let backoff = 50
  for (;;) {
    const live = cluster.live()
    const instance = live[Math.floor(Math.random() * live.length)]
    if (instance) {
      try {
        const res = await fetch(`${instance.url}${path}`, {
          method,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        })
        const text = await res.text()
        let parsed: any = text
        try {
          parsed = JSON.parse(text)
        } catch {
          // not JSON: kept as text for the error message
        }
        return { status: res.status, body: parsed, retried }
      } catch (error) {
        retried = true
        if (Date.now() > deadline) throw new Error(`${method} ${path}: no instance answered for 90 s (${(error as Error).message})`)
      }
    } else if (Date.now() > deadline) throw new Error(`${method} ${path}: no instance up for 90 s`)
    await sleep(backoff)
    backoff = Math.min(backoff * 2, 500)
  }
}

async function ok(cluster: Cluster, token: string | null, method: string, path: string, body?: unknown, expected = 200) {
  const res = await request(cluster, token, method, path, body)
  if (res.status !== expected) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`)
  return res.body.data
}

export interface User {
  index: number
  id: number
  token: string
}

export type ChatKind = 'personal' | 'group' | 'channel'

export interface Chat {
  kind: ChatKind
  /** known once the first message is sent (a personal chat opens with it) */
  id: number | null
  members: User[]
  /** who may post (a channel: its owner) */
  posters: User[]
  /** a personal chat is addressed by receiver, until its id is known */
  pair?: [User, User]
}

export interface Sent {
  id: number
  chat: Chat
  sender: User
  deleted: boolean
  /** users who deleted it for themselves: to them it is 404 */
  hiddenFor: Set<number>
}

export interface WorkloadFigures {
  sent: number
  edits: number
  deletes: number
  deletesForMe: number
  reactions: number
  reads: number
  /** actions refused because a concurrent delete got there first (404), as the API says it should */
  raced: number
  /** requests an instance's death cut, then retried */
  retried: number
}

/** Everyone, their chats: personal chats along a ring (each user talks to 2–4 others), groups of 3–8, one channel of everyone. */
export async function setUp(cluster: Cluster, clients: number, random: () => number) {
  const users: User[] = []
  // argon2 hashing is the cost here: a few at a time
  for (let i = 0; i < clients; i += 8) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(8, clients - i) }, async (_, k) => {
        const data = await ok(
          cluster,
          null,
          'POST',
          `${V2}/auth/register`,
          { username: `conf_${i + k}_${randomBytes(4).toString('hex')}`, password: 'conformance password' },
          201,
        )
        return { index: i + k, id: data.user.user_id as number, token: data.session_token as string }
      }),
    )
    users.push(...batch)
  }
  const chats: Chat[] = []
  const pairs = new Set<string>()
  for (const user of users) {
    for (const step of [1, 2]) {
      const peer = users[(user.index + step) % users.length]
      const key = [user.index, peer.index].sort((a, b) => a - b).join('-')
      if (peer === user || pairs.has(key)) continue
      pairs.add(key)
      chats.push({ kind: 'personal', id: null, members: [user, peer], posters: [user, peer], pair: [user, peer] })
    }
  }
  const groups = Math.max(2, Math.round(clients / 5))
  for (let g = 0; g < groups; g++) {
    const size = Math.min(users.length, 3 + Math.floor(random() * 6))
    const members = shuffle([...users], random).slice(0, size)
    const data = await ok(cluster, members[0].token, 'POST', `${V2}/groups/create`, {
      title: `Conformance ${g}`,
      member_ids: members.slice(1).map((u) => u.id),
    })
    chats.push({ kind: 'group', id: data.group_id, members, posters: members })
  }
  const owner = users[0]
  const channel = await ok(cluster, owner.token, 'POST', `${V2}/channels/create`, { title: 'Conformance channel' })
  await Promise.all(
    users.slice(1).map((user) => ok(cluster, user.token, 'POST', `${V2}/channels/subscribe`, { channel_id: channel.channel_id })),
  )
  chats.push({ kind: 'channel', id: channel.channel_id, members: users, posters: [owner] })
  // open every personal chat with a first message, so that each user knows all their chats' ids before connecting
  await Promise.all(
    chats.map(async (chat) => {
      if (chat.kind !== 'personal') return
      const [from, to] = chat.pair!
      const data = await ok(cluster, from.token, 'POST', `${V2}/messages/send`, { receiver_id: to.id, content: 'hello' })
      chat.id = data.chat_id
    }),
  )
  return { users, chats }
}

export function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[items[i], items[j]] = [items[j], items[i]]
  }
  return items
}

/** A small seeded generator (mulberry32), so that a run can be repeated with CONFORMANCE_SEED. */
export function seeded(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const EMOJI = ['👍', '❤️', '😂', '🔥', '🎉']

/**
 * Sends `messages` messages with `workers` senders at once; after each send, with some chance, an
 * edit (10%), delete for everyone (4%), delete for me (2%) or reaction (15%) on an earlier message,
 * or a read (15%: the read state is compared too). `progress` is told after each send.
 */
export async function drive(
  cluster: Cluster,
  chats: Chat[],
  options: { messages: number; workers: number; random: () => number; progress: (sent: number) => Promise<void> | void },
): Promise<{ figures: WorkloadFigures; sentMessages: Sent[] }> {
  const { random } = options
  const figures: WorkloadFigures = { sent: 0, edits: 0, deletes: 0, deletesForMe: 0, reactions: 0, reads: 0, raced: 0, retried: 0 }
  const sent: Sent[] = []
  const weights: [ChatKind, number][] = [
    ['personal', 0.6],
    ['group', 0.3],
    ['channel', 0.1],
  ]
  const byKind = (kind: ChatKind) => chats.filter((chat) => chat.kind === kind)
  const pickKind = () => {
    let r = random()
    for (const [kind, weight] of weights) if ((r -= weight) < 0) return kind
    return 'personal'
  }
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]
  /** a 404 after a delete (ours or a cut retry of one) is the API's answer, not a failure */
  const expect = (res: Reply, what: string, target?: Sent, actor?: User) => {
    if (res.retried) figures.retried++
    if (res.status === 200) return true
    if (res.status === 404 && target && (target.deleted || (actor && target.hiddenFor.has(actor.id)))) {
      figures.raced++
      return false
    }
    throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`)
  }
  const live = () => sent.filter((message) => !message.deleted)

  let next = 0
  const worker = async () => {
    while (next < options.messages) {
      const n = ++next
      const chat = pick(byKind(pickKind()))
      const sender = pick(chat.posters)
      const clientMessageId = `c${n}-${randomBytes(4).toString('hex')}`
      const res = await request(cluster, sender.token, 'POST', `${V2}/messages/send`, {
        chat_id: chat.id,
        content: `m${n} from ${sender.index}`,
        client_message_id: clientMessageId,
      })
      expect(res, `send #${n}`)
      if (res.body.data.client_message_id !== clientMessageId)
        throw new Error(`send #${n} answered another message: ${JSON.stringify(res.body.data).slice(0, 300)}`)
      sent.push({ id: res.body.data.message_id, chat, sender, deleted: false, hiddenFor: new Set() })
      figures.sent++
      await options.progress(figures.sent)

      const r = random()
      const pool = live()
      if (pool.length === 0) continue
      if (r < 0.1) {
        // edit my own message (in the channel the owner's posts)
        const target = pick(pool)
        const edited = await request(cluster, target.sender.token, 'POST', `${V2}/messages/${target.id}/edit`, {
          content: `edited ${n} (${target.id})`,
        })
        if (expect(edited, `edit ${target.id}`, target, target.sender)) figures.edits++
      } else if (r < 0.14) {
        const target = pick(pool)
        target.deleted = true
        const gone = await request(cluster, target.sender.token, 'DELETE', `${V2}/messages/${target.id}?for_all=true`)
        // a cut delete that landed answers 404 when retried
        if (gone.status === 404 && gone.retried) figures.deletes++
        else if (expect(gone, `delete ${target.id}`, target)) figures.deletes++
      } else if (r < 0.16) {
        // deleted for me: gone from my history only, my devices hear it on my own log
        const target = pick(pool)
        const me = pick(target.chat.members)
        const again = target.hiddenFor.has(me.id)
        target.hiddenFor.add(me.id)
        const hidden = await request(cluster, me.token, 'DELETE', `${V2}/messages/${target.id}?for_all=false`)
        // deleting for me twice is fine (200); after a delete for everyone it is 404
        if (expect(hidden, `delete for me ${target.id}`, target) && !again) figures.deletesForMe++
      } else if (r < 0.31) {
        const target = pick(pool)
        const who = pick(target.chat.members)
        const emoji = random() < 0.15 ? null : pick(EMOJI)
        const reacted = await request(cluster, who.token, 'POST', `${V2}/messages/${target.id}/reaction`, { emoji })
        if (expect(reacted, `reaction on ${target.id}`, target, who)) figures.reactions++
      } else if (r < 0.46) {
        // a member reads a chat: most often up to its newest message (as a client opening the chat
        // does, so receipts cover ranges), otherwise up to an older one (mostly a position already
        // passed: no receipt)
        const some = pick(pool)
        const newest = pool.filter((message) => message.chat === some.chat).at(-1)!
        const target = random() < 0.6 ? newest : some
        const who = pick(target.chat.members)
        const read = await request(cluster, who.token, 'POST', `${V2}/messages/${target.id}/read`)
        if (expect(read, `read ${target.id}`, target, who)) figures.reads++
      }
    }
  }
  await Promise.all(Array.from({ length: options.workers }, worker))
  return { figures, sentMessages: sent }
}
