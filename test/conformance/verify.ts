/**
 * The end of a conformance run: every client's logs against the server's (GET V2/updates, GET
 * V2/chat/updates), event by event, and every client's state (what its events say each chat
 * holds) against the server's history (GET V2/chat/history as that user). The first difference is
 * reported with the client, the chat, and what the server has against what the client got.
 */
import type { ConformanceClient, Logged } from './client.js'
import type { Cluster } from './cluster.js'
import { request, V2, type Sent } from './workload.js'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export interface Divergence {
  client: number
  userId: number
  /** 'user log', 'chat 12 log', 'chat 12 history', … */
  where: string
  chatId: number | null
  index?: number
  expected: unknown
  got: unknown
}

async function get(cluster: Cluster, token: string, path: string) {
  const res = await request(cluster, token, 'GET', path)
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`)
  return res.body
}

/** The user's whole update log, or a chat's whole event log, from the start. */
export async function serverLog(cluster: Cluster, token: string, chatId: number | null): Promise<Logged[]> {
  const out: Logged[] = []
  for (;;) {
    const since = chatId === null ? (out.at(-1)?.seq ?? 0) : (out.at(-1)?.chat_seq ?? 0)
    const path = chatId === null ? `${V2}/updates?since=${since}&limit=1000` : `${V2}/chat/updates?chat_id=${chatId}&since=${since}&limit=1000`
    const body = await get(cluster, token, path)
    if (body.data.reset) throw new Error(`${path}: the server says reset (its log was pruned)`)
    const page = body.data.updates as Logged[]
    out.push(...page)
    if (page.length < 1000) return out
  }
}

/** Where the user's log and each of the client's chats stand on the server now. */
async function latest(cluster: Cluster, client: ConformanceClient) {
  const user = (await get(cluster, client.token, `${V2}/updates?since=${client.seq}&limit=1`)).data.seq as number
  const chats = new Map<number, number>()
  for (const chatId of client.chatSeqs.keys()) {
    chats.set(chatId, (await get(cluster, client.token, `${V2}/chat/updates?chat_id=${chatId}&since=0&limit=1`)).data.chat_seq)
  }
  return { user, chats }
}

/** Waits (up to `timeoutMs`) until every client holds everything the server has logged for it. */
export async function settle(cluster: Cluster, clients: ConformanceClient[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  const pending = new Set(clients)
  while (pending.size > 0 && Date.now() < deadline) {
    for (const client of [...pending]) {
      const at = await latest(cluster, client)
      if (client.seq >= at.user && [...at.chats].every(([chatId, seq]) => (client.chatSeqs.get(chatId) ?? 0) >= seq)) pending.delete(client)
    }
    if (pending.size > 0) await sleep(200)
  }
  return pending.size === 0
}

/** What identifies a logged event: its position, its type, and what it says (a message.new: which message, rendered as it is now when replayed). */
function identity(event: Logged | undefined) {
  if (!event) return null
  const position = event.seq !== undefined ? { seq: event.seq } : { chat_id: event.chat_id, chat_seq: event.chat_seq }
  if (event.type === 'message.new') {
    const message = event.data?.message ?? {}
    return { ...position, type: event.type, message_id: message.message_id, chat_id_of_message: message.chat_id, sender_id: message.sender_id, client_message_id: message.client_message_id }
  }
  return { ...position, type: event.type, data: event.data }
}

/** JSON with object keys sorted (PostgreSQL's jsonb keeps its own key order). */
export function stable(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]])) : v,
  )
}

const chatOf = (event: Logged | undefined): number | null => event?.chat_id ?? event?.data?.chat_id ?? event?.data?.message?.chat_id ?? null

/** The first position where the client's log and the server's differ, or null. */
export function compareLogs(client: Pick<ConformanceClient, 'index' | 'userId'>, where: string, expected: Logged[], got: Logged[], chatId: number | null): Divergence | null {
  const n = Math.max(expected.length, got.length)
  for (let i = 0; i < n; i++) {
    const want = identity(expected[i])
    const have = identity(got[i])
    if (stable(want) !== stable(have)) {
      return { client: client.index, userId: client.userId, where, chatId: chatId ?? chatOf(expected[i] ?? got[i]), index: i, expected: expected[i] ?? '(nothing: the client got more events than the server logged)', got: got[i] ?? '(nothing: missing on the client)' }
    }
  }
  return null
}

interface MessageState {
  content: string
  edited: boolean
  reactions: Record<string, number>
}

/** Reactions without zero counts, keys sorted. */
const reactionsOf = (map: Record<string, number> | undefined) =>
  Object.fromEntries(Object.entries(map ?? {}).filter(([, count]) => count > 0).sort(([a], [b]) => (a < b ? -1 : 1)))

/** What a client's events say each chat holds (messages not deleted for everyone, nor for this user). */
export function stateOf(client: Pick<ConformanceClient, 'userLog' | 'chatLogs'>): Map<number, Map<number, MessageState>> {
  const chats = new Map<number, Map<number, MessageState>>()
  const deleted = new Set<number>()
  const hidden = new Set<number>()
  const of = (chatId: number) => {
    let chat = chats.get(chatId)
    if (!chat) chats.set(chatId, (chat = new Map()))
    return chat
  }
  const apply = (event: Logged) => {
    const data = event.data ?? {}
    if (event.type === 'message.new') {
      const m = data.message
      of(m.chat_id).set(m.message_id, { content: m.content, edited: m.edited_at !== null, reactions: reactionsOf(m.reactions) })
    } else if (event.type === 'message.edited') {
      // the message as the edit left it, reactions included (an edit and a reaction take the message in turn)
      const m = data.message
      of(m.chat_id).set(m.message_id, { content: m.content, edited: true, reactions: reactionsOf(m.reactions) })
    } else if (event.type === 'message.deleted') {
      ;(data.deleted_for_all ? deleted : hidden).add(data.message_id)
    } else if (event.type === 'reaction.updated') {
      const chat = of(data.chat_id)
      const known = chat.get(data.message_id)
      if (known) known.reactions = reactionsOf(data.reactions)
    }
  }
  for (const event of client.userLog) apply(event)
  for (const log of client.chatLogs.values()) for (const event of log) apply(event)
  for (const chat of chats.values()) for (const id of chat.keys()) if (deleted.has(id) || hidden.has(id)) chat.delete(id)
  return chats
}

/** A chat's whole history as this user sees it, by message id. */
async function history(cluster: Cluster, token: string, chatId: number): Promise<Map<number, MessageState>> {
  const out = new Map<number, MessageState>()
  for (let page = 1; ; page++) {
    const body = await get(cluster, token, `${V2}/chat/history?chat_id=${chatId}&per_page=100&page=${page}`)
    for (const m of body.items) out.set(m.message_id, { content: m.content, edited: m.edited_at !== null, reactions: reactionsOf(m.reactions) })
    if (page >= (body.pages ?? 1)) return out
  }
}

export interface VerifyResult {
  divergence: Divergence | null
  /** logged events compared, over all clients */
  eventsChecked: number
  messagesChecked: number
}

/**
 * Compares every client with the server. `personalChats` are each client's personal chats (their
 * log is the user's own); `sent` are the acknowledged sends, each of which must be in the history
 * of every member who did not delete it for themselves, unless deleted for everyone.
 */
export async function verify(cluster: Cluster, clients: ConformanceClient[], personalChats: Map<number, number[]>, sent: Sent[]): Promise<VerifyResult> {
  let eventsChecked = 0
  let messagesChecked = 0
  let first: Divergence | null = null
  for (const client of clients) {
    const violation = client.violations[0]
    if (violation && !first) first = { client: client.index, userId: client.userId, where: `live: ${violation.what}`, chatId: chatOf(violation.frame as Logged), expected: 'the protocol', got: violation.frame ?? null }

    const userLog = await serverLog(cluster, client.token, null)
    eventsChecked += userLog.length
    first ??= compareLogs(client, 'user log', userLog, client.userLog, null)
    for (const [chatId, got] of client.chatLogs) {
      const log = await serverLog(cluster, client.token, chatId)
      eventsChecked += log.length
      first ??= compareLogs(client, `chat ${chatId} log`, log, got, chatId)
    }

    const state = stateOf(client)
    for (const chatId of [...(personalChats.get(client.index) ?? []), ...client.chatLogs.keys()]) {
      const server = await history(cluster, client.token, chatId)
      const mine = state.get(chatId) ?? new Map<number, MessageState>()
      messagesChecked += server.size
      for (const [id, want] of server) {
        const have = mine.get(id)
        if (!first && stable(have) !== stable(want)) {
          first = { client: client.index, userId: client.userId, where: `chat ${chatId} history`, chatId, expected: { message_id: id, ...want }, got: have ? { message_id: id, ...have } : '(the client has no such message)' }
        }
      }
      for (const [id, have] of mine) {
        if (!first && !server.has(id)) first = { client: client.index, userId: client.userId, where: `chat ${chatId} history`, chatId, expected: `(message ${id} is not in the server's history)`, got: { message_id: id, ...have } }
      }
    }
  }
  // durability: every acknowledged send that nobody deleted is held by every member
  const byUser = new Map(clients.map((client) => [client.userId, client]))
  const states = new Map(clients.map((client) => [client.userId, stateOf(client)]))
  for (const message of sent) {
    if (first || message.deleted) continue
    for (const member of message.chat.members) {
      if (message.hiddenFor.has(member.id) || !byUser.has(member.id)) continue
      if (!states.get(member.id)!.get(message.chat.id!)?.has(message.id)) {
        first = { client: byUser.get(member.id)!.index, userId: member.id, where: `chat ${message.chat.id}: an acknowledged send`, chatId: message.chat.id, expected: { message_id: message.id, sender_id: message.sender.id }, got: '(the client never got it)' }
        break
      }
    }
  }
  return { divergence: first, eventsChecked, messagesChecked }
}
