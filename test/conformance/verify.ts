/**
 * The end of a conformance run: every client's logs against the server's (GET V2/updates, GET
 * V2/chat/updates), event by event, and every client's state (what its events say each chat
 * holds) against the server's history (GET V2/chat/history as that user). The first difference is
 * reported with the client, the chat, and what the server has against what the client got.
 *
 * Read state is part of a message's state, as far as a client can know it from its events. A
 * message's read_at is stamped once, by the first member other than its sender to read past it, and
 * `message.read` ({chat_id, reader_id, message_id, read_at}: everything up to message_id) goes to
 * both members of a personal chat but, in a group or channel, only to the reader's own devices. So:
 * - in a personal chat the client knows it exactly: a message is read at the first receipt of the
 *   other member that reaches it (or as its payload says, a message.new replayed after the read);
 * - in a group or channel it knows only what its own receipts read: the messages of others between
 *   where its position stood (its last receipt, or its own last message: sending moves the sender's
 *   position without a receipt) and the receipt's message. Those must be read on the server (by it
 *   or by someone before it); whatever else the server says read, the client cannot know.
 * delivered_at is carried by no event (the gateway stamps it in batches when a device is handed a
 * message, and a SIGKILL may lose a batch by design), so only a value a payload showed is checked:
 * once set it never changes.
 * Within a chat, message ids grow with its seq (a send allocates the seq, holding the chat's row,
 * before it inserts the message), so "up to message_id" is a comparison of ids.
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
    const path =
      chatId === null ? `${V2}/updates?since=${since}&limit=1000` : `${V2}/chat/updates?chat_id=${chatId}&since=${since}&limit=1000`
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
    return {
      ...position,
      type: event.type,
      message_id: message.message_id,
      chat_id_of_message: message.chat_id,
      sender_id: message.sender_id,
      client_message_id: message.client_message_id,
    }
  }
  return { ...position, type: event.type, data: event.data }
}

/** JSON with object keys sorted (PostgreSQL's jsonb keeps its own key order). */
export function stable(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  )
}

const chatOf = (event: Logged | undefined): number | null => event?.chat_id ?? event?.data?.chat_id ?? event?.data?.message?.chat_id ?? null

/** The first position where the client's log and the server's differ, or null. */
export function compareLogs(
  client: Pick<ConformanceClient, 'index' | 'userId'>,
  where: string,
  expected: Logged[],
  got: Logged[],
  chatId: number | null,
): Divergence | null {
  const n = Math.max(expected.length, got.length)
  for (let i = 0; i < n; i++) {
    const want = identity(expected[i])
    const have = identity(got[i])
    if (stable(want) !== stable(have)) {
      return {
        client: client.index,
        userId: client.userId,
        where,
        chatId: chatId ?? chatOf(expected[i] ?? got[i]),
        index: i,
        expected: expected[i] ?? '(nothing: the client got more events than the server logged)',
        got: got[i] ?? '(nothing: missing on the client)',
      }
    }
  }
  return null
}

export interface MessageState {
  content: string
  edited: boolean
  reactions: Record<string, number>
  /** in a group or channel: whether this client knows it read (see the top of this file) */
  is_read: boolean
  /** in a group or channel: null unless a payload showed it */
  read_at: string | null
  /** null unless a payload showed it */
  delivered_at: string | null
}

/** Reactions without zero counts, keys sorted. */
const reactionsOf = (map: Record<string, number> | undefined) =>
  Object.fromEntries(
    Object.entries(map ?? {})
      .filter(([, count]) => count > 0)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  )

/** A message as a payload (a message.new, message.edited or history item) shows it. */
const shownAs = (m: any, edited: boolean): MessageState => ({
  content: m.content,
  edited,
  reactions: reactionsOf(m.reactions),
  is_read: m.is_read === true,
  read_at: m.read_at ?? null,
  delivered_at: m.delivered_at ?? null,
})

interface Receipt {
  reader_id: number
  message_id: number
  read_at: string
}

/**
 * What a client's events say each chat holds (messages not deleted for everyone, nor for this
 * user), with each message's read state as far as the client can know it.
 */
export function stateOf(client: Pick<ConformanceClient, 'userId' | 'userLog' | 'chatLogs'>): Map<number, Map<number, MessageState>> {
  const chats = new Map<number, Map<number, MessageState>>()
  /** who sent each message and to whom (receiver_id is null outside personal chats) */
  const senders = new Map<number, { sender_id: number; receiver_id: number | null }>()
  /** each chat's receipts, in the order the client got them */
  const receipts = new Map<number, Receipt[]>()
  const deleted = new Set<number>()
  const hidden = new Set<number>()
  const of = (chatId: number) => {
    let chat = chats.get(chatId)
    if (!chat) chats.set(chatId, (chat = new Map()))
    return chat
  }
  /** a later payload replaces the content and reactions; what was known read or delivered stays known */
  const put = (m: any, edited: boolean) => {
    const chat = of(m.chat_id)
    const known = chat.get(m.message_id)
    const next = shownAs(m, edited)
    if (known) {
      next.is_read ||= known.is_read
      next.read_at = known.read_at ?? next.read_at
      next.delivered_at = known.delivered_at ?? next.delivered_at
    }
    chat.set(m.message_id, next)
    senders.set(m.message_id, { sender_id: m.sender_id, receiver_id: m.receiver_id ?? null })
  }
  const apply = (event: Logged) => {
    const data = event.data ?? {}
    if (event.type === 'message.new') {
      put(data.message, data.message.edited_at !== null)
    } else if (event.type === 'message.edited') {
      // the message as the edit left it, reactions included (an edit and a reaction take the message in turn)
      put(data.message, true)
    } else if (event.type === 'message.deleted') {
      ;(data.deleted_for_all ? deleted : hidden).add(data.message_id)
    } else if (event.type === 'reaction.updated') {
      const chat = of(data.chat_id)
      const known = chat.get(data.message_id)
      if (known) known.reactions = reactionsOf(data.reactions)
    } else if (event.type === 'message.read') {
      if (!receipts.has(data.chat_id)) receipts.set(data.chat_id, [])
      receipts.get(data.chat_id)!.push({ reader_id: data.reader_id, message_id: data.message_id, read_at: data.read_at })
    }
  }
  for (const event of client.userLog) apply(event)
  for (const log of client.chatLogs.values()) for (const event of log) apply(event)

  // the receipts, once every message is known (a deleted one still counts as a position)
  for (const [chatId, chat] of chats) {
    const inOrder = [...chat.keys()].sort((a, b) => a - b)
    const chatReceipts = receipts.get(chatId) ?? []
    for (const id of inOrder) {
      const from = senders.get(id)!
      if (from.receiver_id === null) continue
      // personal: the first receipt of the other member that reaches it stamped it (Saved Messages: always read)
      const state = chat.get(id)!
      if (from.receiver_id === from.sender_id) state.is_read = true
      const first = chatReceipts.find((r) => r.reader_id !== from.sender_id && r.message_id >= id)
      if (first) {
        state.is_read = true
        state.read_at ??= first.read_at
      }
    }
    // a group or channel: what my own receipts read
    const mine = inOrder.filter((id) => senders.get(id)!.sender_id === client.userId)
    let position = 0
    for (const receipt of chatReceipts) {
      if (receipt.reader_id !== client.userId) continue
      const floor = Math.max(position, ...mine.filter((id) => id < receipt.message_id))
      for (const id of inOrder) {
        const from = senders.get(id)!
        if (from.receiver_id === null && from.sender_id !== client.userId && id > floor && id <= receipt.message_id)
          chat.get(id)!.is_read = true
      }
      position = Math.max(position, receipt.message_id)
    }
  }
  for (const chat of chats.values()) for (const id of chat.keys()) if (deleted.has(id) || hidden.has(id)) chat.delete(id)
  return chats
}

/**
 * The fields in which the client's state of a message differs from the server's. `exact` (a
 * personal chat): the read state must be the same; otherwise only what the client knows read must
 * be read. A delivered_at the client saw must be the server's.
 */
export function differences(want: MessageState, have: MessageState, exact: boolean): string[] {
  const out: string[] = []
  if (want.content !== have.content) out.push('content')
  if (want.edited !== have.edited) out.push('edited')
  if (stable(want.reactions) !== stable(have.reactions)) out.push('reactions')
  if (exact ? want.is_read !== have.is_read : have.is_read && !want.is_read) out.push('is_read')
  if (exact ? want.read_at !== have.read_at : have.read_at !== null && want.read_at !== have.read_at) out.push('read_at')
  if (have.delivered_at !== null && want.delivered_at !== have.delivered_at) out.push('delivered_at')
  return out
}

/** Read-state figures: how much the comparison had to bite on. */
export interface ReadFigures {
  /** message.read events the clients hold */
  receipts: number
  /** messages of personal chats whose read state was compared exactly, and of those the read ones */
  exact: number
  exactRead: number
  /** messages of groups and channels a client knew read (from its own receipts, or a payload that said so) */
  known: number
}

/**
 * The first difference between a client's state of one chat and the server's history of it (its
 * messages, newest first as the history pages them, then any the client holds that the server
 * does not), or null.
 */
export function compareState(
  client: Pick<ConformanceClient, 'index' | 'userId'>,
  chatId: number,
  server: Map<number, MessageState>,
  mine: Map<number, MessageState>,
  exact: boolean,
  figures?: ReadFigures,
): Divergence | null {
  let first: Divergence | null = null
  for (const [id, want] of server) {
    const have = mine.get(id)
    if (have && figures) {
      if (exact) {
        figures.exact++
        if (want.is_read) figures.exactRead++
      } else if (have.is_read) figures.known++
    }
    const fields = have ? differences(want, have, exact) : ['message']
    if (!first && fields.length > 0) {
      first = {
        client: client.index,
        userId: client.userId,
        where: `chat ${chatId} history (${fields.join(', ')})`,
        chatId,
        expected: { message_id: id, ...want },
        got: have ? { message_id: id, ...have } : '(the client has no such message)',
      }
    }
  }
  for (const [id, have] of mine) {
    if (!first && !server.has(id))
      first = {
        client: client.index,
        userId: client.userId,
        where: `chat ${chatId} history`,
        chatId,
        expected: `(message ${id} is not in the server's history)`,
        got: { message_id: id, ...have },
      }
  }
  return first
}

/** A chat's whole history as this user sees it, by message id. */
async function history(cluster: Cluster, token: string, chatId: number): Promise<Map<number, MessageState>> {
  const out = new Map<number, MessageState>()
  for (let page = 1; ; page++) {
    const body = await get(cluster, token, `${V2}/chat/history?chat_id=${chatId}&per_page=100&page=${page}`)
    for (const m of body.items) out.set(m.message_id, shownAs(m, m.edited_at !== null))
    if (page >= (body.pages ?? 1)) return out
  }
}

export interface VerifyResult {
  divergence: Divergence | null
  /** logged events compared, over all clients */
  eventsChecked: number
  messagesChecked: number
  read: ReadFigures
}

/**
 * Compares every client with the server. `personalChats` are each client's personal chats (their
 * log is the user's own); `sent` are the acknowledged sends, each of which must be in the history
 * of every member who did not delete it for themselves, unless deleted for everyone.
 */
export async function verify(
  cluster: Cluster,
  clients: ConformanceClient[],
  personalChats: Map<number, number[]>,
  sent: Sent[],
): Promise<VerifyResult> {
  let eventsChecked = 0
  let messagesChecked = 0
  let first: Divergence | null = null
  const read: ReadFigures = { receipts: 0, exact: 0, exactRead: 0, known: 0 }
  for (const client of clients) {
    const violation = client.violations[0]
    if (violation && !first)
      first = {
        client: client.index,
        userId: client.userId,
        where: `live: ${violation.what}`,
        chatId: chatOf(violation.frame as Logged),
        expected: 'the protocol',
        got: violation.frame ?? null,
      }

    const userLog = await serverLog(cluster, client.token, null)
    eventsChecked += userLog.length
    first ??= compareLogs(client, 'user log', userLog, client.userLog, null)
    for (const [chatId, got] of client.chatLogs) {
      const log = await serverLog(cluster, client.token, chatId)
      eventsChecked += log.length
      first ??= compareLogs(client, `chat ${chatId} log`, log, got, chatId)
    }

    const state = stateOf(client)
    read.receipts += client.userLog.filter((event) => event.type === 'message.read').length
    const personal = new Set(personalChats.get(client.index) ?? [])
    for (const chatId of [...personal, ...client.chatLogs.keys()]) {
      const server = await history(cluster, client.token, chatId)
      messagesChecked += server.size
      const divergence = compareState(
        client,
        chatId,
        server,
        state.get(chatId) ?? new Map<number, MessageState>(),
        personal.has(chatId),
        read,
      )
      first ??= divergence
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
        first = {
          client: byUser.get(member.id)!.index,
          userId: member.id,
          where: `chat ${message.chat.id}: an acknowledged send`,
          chatId: message.chat.id,
          expected: { message_id: message.id, sender_id: message.sender.id },
          got: '(the client never got it)',
        }
        break
      }
    }
  }
  return { divergence: first, eventsChecked, messagesChecked, read }
}
