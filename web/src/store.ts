/**
 * The app's state as signals, and the operations that change it: the chat list, each opened
 * chat's history (deduplicated by message id, kept in id order), typing and presence, and the
 * connection state. Live updates from the gateway (gateway.ts) and answers of the API both land
 * here through the same upsert, so a message that arrives both ways is shown once.
 */
import { computed, signal } from '@preact/signals'
import { api, data, items, ok } from './api'
import { learnBots } from './bots'
import type { ChatListItem, MessageView, Msg, User } from './types'

export const me = signal<User | null>(null)
export const chats = signal<ChatListItem[]>([])
export const chatsLoaded = signal(false)
export const showArchived = signal(false)
/** 'connecting' | 'online' | 'offline' | 'suspended' */
export const connection = signal<'connecting' | 'online' | 'offline' | 'suspended'>('connecting')
/** a readable message for the person (an error), shown in an alert region */
export const notice = signal<string | null>(null)
/** the chat on screen, for unread counting and read receipts */
export const openChatId = signal<number | null>(null)
/** bumped when a chat's members or details change (member.joined/left, chat.updated): open info pages reload */
export const chatChanges = signal(0)

export class History {
  readonly items = signal<Msg[]>([])
  readonly byId = new Map<number, Msg>()
  readonly hasMore = signal(true)
  readonly loading = signal(false)
  loaded = false
  /** the highest message id this device told the server it read */
  readSent = 0
}

const histories = new Map<number, History>()
export function history(chatId: number): History {
  let found = histories.get(chatId)
  if (!found) histories.set(chatId, (found = new History()))
  return found
}

/** who is typing in each chat (user ids), expiring by themselves */
export const typing = signal<Map<number, Map<number, string>>>(new Map())
const typingTimers = new Map<string, ReturnType<typeof setTimeout>>()
/** user id → name, learned from messages and members */
export const names = new Map<number, string>()

export function chatTitle(item: ChatListItem | undefined): string {
  if (!item) return 'Chat'
  if (item.is_saved) return 'Saved Messages'
  return item.peer?.display_name || item.peer?.username || item.group?.name || item.channel?.name || 'Chat'
}

export const chatById = (id: number | null) => (id === null ? undefined : chats.value.find((c) => c.chat_id === id))

export const unreadTotal = computed(() => chats.value.reduce((sum, c) => sum + c.unread_count, 0))

const uploadUrl = (path: string | null | undefined) => (path ? `/uploads/${path}` : null)

/** A message's id in either shape (0: a scheduled message, which has none yet). */
export const idOf = (view: MessageView): number => ('id' in view ? view.id : (view.message_id ?? 0))

/** reaction counts without the absent keys an index signature allows */
export function counts(reactions: Record<string, number | undefined>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [emoji, count] of Object.entries(reactions)) if (typeof count === 'number') out[emoji] = count
  return out
}

export function toMsg(view: MessageView, previous?: Msg): Msg {
  const id = idOf(view)
  const rich = 'id' in view ? view : null
  names.set(view.sender_id, view.sender_username)
  return {
    id,
    chat_id: view.chat_id,
    sender_id: view.sender_id,
    sender_username: view.sender_username,
    content: view.content,
    reply_to_id: view.reply_to_id,
    reply_to_content: rich?.reply_to_content ?? previous?.reply_to_content ?? null,
    reply_to_sender: rich?.reply_to_sender ?? previous?.reply_to_sender ?? null,
    forwarded_from: view.forwarded_from,
    file_url: view.file_url,
    file_type: view.file_type,
    file_name: rich?.file_name ?? previous?.file_name ?? null,
    file_size: rich?.file_size ?? previous?.file_size ?? null,
    thumbnail_url: uploadUrl(rich?.thumbnail_path) ?? previous?.thumbnail_url ?? null,
    is_read: view.is_read || (previous?.is_read ?? false),
    delivered: view.delivered_at !== null || (previous?.delivered ?? false),
    timestamp: view.timestamp,
    edited_at: view.edited_at,
    reactions: counts(view.reactions),
    my_reaction: previous?.my_reaction ?? null,
    client_message_id: view.client_message_id,
    poll_id: view.poll_id,
    deleted: false,
  }
}

/** Inserts or replaces messages of one chat, keeping id order and one entry per id. */
export function upsert(chatId: number, views: MessageView[], extra?: Partial<Msg>): Msg[] {
  const h = history(chatId)
  const out: Msg[] = []
  let added = false
  for (const view of views) {
    const previous = h.byId.get(idOf(view))
    const msg = { ...toMsg(view, previous), ...extra }
    if (!msg.id) continue
    if (!msg.reply_to_content && msg.reply_to_id) {
      const quoted = h.byId.get(msg.reply_to_id)
      if (quoted)
        Object.assign(msg, { reply_to_content: quoted.content || quoted.file_name || '', reply_to_sender: quoted.sender_username })
    }
    if (!previous) added = true
    h.byId.set(msg.id, msg)
    out.push(msg)
  }
  if (out.length) {
    const items = added ? [...h.byId.values()].sort((a, b) => a.id - b.id) : h.items.value.map((m) => h.byId.get(m.id) ?? m)
    h.items.value = items
  }
  return out
}

export function removeMessage(chatId: number, messageId: number) {
  const h = histories.get(chatId)
  if (!h?.byId.delete(messageId)) return
  h.items.value = h.items.value.filter((m) => m.id !== messageId)
}

export function patchMessage(chatId: number, messageId: number, patch: Partial<Msg>) {
  const h = histories.get(chatId)
  const found = h?.byId.get(messageId)
  if (!h || !found) return
  const next = { ...found, ...patch }
  h.byId.set(messageId, next)
  h.items.value = h.items.value.map((m) => (m.id === messageId ? next : m))
}

const PAGE = 30

/** Loads the newest page of a chat, or the page before the oldest loaded message (keyset before_id). */
export async function loadHistory(chatId: number, older = false) {
  const h = history(chatId)
  if (h.loading.value || (older && !h.hasMore.value)) return
  h.loading.value = true
  try {
    const oldest = h.items.value[0]?.id
    const query = { chat_id: chatId, limit: PAGE, format: 'rich' as const, ...(older && oldest ? { before_id: oldest } : {}) }
    const page = await items(api.GET('/api.v2/api/chat/history', { params: { query } }))
    upsert(chatId, page)
    if (older || !h.loaded) h.hasMore.value = page.length >= PAGE
    h.loaded = true
  } finally {
    h.loading.value = false
  }
}

export async function loadChats() {
  const [list, pins] = await Promise.all([
    items(api.GET('/api.v2/api/chat_list', { params: { query: { per_page: 100, archived: showArchived.value } } })),
    items(api.GET('/api.v2/api/pins')).catch(() => []),
  ])
  const pinned = new Set(pins.map((p) => p.chat_id))
  const loaded: ChatListItem[] = list
  learnBots(loaded.flatMap((item) => (item.peer ? [item.peer] : [])))
  for (const item of loaded) {
    item.is_pinned = pinned.has(item.chat_id)
    item.is_archived = showArchived.value
    if (item.peer) names.set(item.peer.user_id, item.peer.display_name || item.peer.username)
  }
  chats.value = loaded
  chatsLoaded.value = true
}

let reloadTimer: ReturnType<typeof setTimeout> | null = null
/** Reloads the chat list soon, once for a burst of changes. */
export function reloadChatsSoon() {
  if (reloadTimer) return
  reloadTimer = setTimeout(() => {
    reloadTimer = null
    loadChats().catch((error) => (notice.value = String(error.message ?? error)))
  }, 150)
}

/** A new message (sent, received or replayed): into its history and onto the chat list. */
export function messageArrived(view: MessageView) {
  const chatId = view.chat_id
  const id = idOf(view)
  const h = history(chatId)
  const known = h.byId.has(id)
  upsert(chatId, [view])
  const index = chats.value.findIndex((c) => c.chat_id === chatId)
  if (index < 0) return reloadChatsSoon()
  const item = chats.value[index]
  if (item.last_message && item.last_message.message_id >= id) return
  const mine = view.sender_id === me.value?.id
  const visible = openChatId.value === chatId && document.visibilityState === 'visible'
  const updated: ChatListItem = {
    ...item,
    last_message: {
      message_id: id,
      content: view.content,
      sender_id: view.sender_id,
      sender_username: view.sender_username,
      timestamp: view.timestamp,
      is_read: view.is_read,
    },
    unread_count: mine || visible || known ? item.unread_count : item.unread_count + 1,
  }
  const rest = chats.value.filter((c) => c.chat_id !== chatId)
  // pinned chats stay on top; the updated chat goes first among the others
  const firstUnpinned = updated.is_pinned ? 0 : rest.findIndex((c) => !c.is_pinned)
  const at = firstUnpinned < 0 ? rest.length : firstUnpinned
  rest.splice(at, 0, updated)
  chats.value = rest
}

/** Someone read up to `messageId`: my messages there show ✓✓; my own read clears the count. */
export function readArrived(chatId: number, readerId: number, messageId: number) {
  if (readerId === me.value?.id) {
    chats.value = chats.value.map((c) =>
      c.chat_id === chatId && (!c.last_message || c.last_message.message_id <= messageId) ? { ...c, unread_count: 0 } : c,
    )
    return
  }
  const h = histories.get(chatId)
  if (h) {
    let changed = false
    for (const [id, msg] of h.byId) {
      if (id <= messageId && !msg.is_read && msg.sender_id === me.value?.id) {
        h.byId.set(id, { ...msg, is_read: true })
        changed = true
      }
    }
    if (changed) h.items.value = h.items.value.map((m) => h.byId.get(m.id) ?? m)
  }
  chats.value = chats.value.map((c) =>
    c.chat_id === chatId && c.last_message && c.last_message.message_id <= messageId && c.last_message.sender_id === me.value?.id
      ? { ...c, last_message: { ...c.last_message, is_read: true } }
      : c,
  )
}

export function typingArrived(chatId: number, userId: number, isTyping: boolean) {
  if (userId === me.value?.id) return
  const key = `${chatId}:${userId}`
  const timer = typingTimers.get(key)
  if (timer) clearTimeout(timer)
  const next = new Map(typing.value)
  const inChat = new Map(next.get(chatId) ?? [])
  if (isTyping) {
    inChat.set(userId, names.get(userId) ?? 'Someone')
    // the server sends a stop 5 s after the last start; this is the fallback when that frame is lost
    typingTimers.set(
      key,
      setTimeout(() => typingArrived(chatId, userId, false), 7000),
    )
  } else inChat.delete(userId)
  if (inChat.size) next.set(chatId, inChat)
  else next.delete(chatId)
  typing.value = next
}

export function clearTyping() {
  for (const timer of typingTimers.values()) clearTimeout(timer)
  typingTimers.clear()
  typing.value = new Map()
}

export function presenceArrived(userId: number, isOnline: boolean, lastSeen: string | null) {
  chats.value = chats.value.map((c) =>
    c.peer?.user_id === userId ? { ...c, peer: { ...c.peer, is_online: isOnline, last_seen: lastSeen } } : c,
  )
}

/** Tells the server this device read the chat up to its newest message from someone else. */
export async function markRead(chatId: number) {
  const h = histories.get(chatId)
  if (!h || document.visibilityState !== 'visible') return
  const mine = me.value?.id
  let newest = 0
  for (const msg of h.items.value) if (msg.sender_id !== mine && msg.id > newest) newest = msg.id
  const item = chatById(chatId)
  if (!newest || newest <= h.readSent) {
    if (item && item.unread_count > 0 && newest)
      chats.value = chats.value.map((c) => (c.chat_id === chatId ? { ...c, unread_count: 0 } : c))
    return
  }
  h.readSent = newest
  try {
    const result = await data(api.POST('/api.v2/api/messages/{id}/read', { params: { path: { id: newest } } }))
    chats.value = chats.value.map((c) => (c.chat_id === chatId ? { ...c, unread_count: result.unread_count } : c))
  } catch (error) {
    h.readSent = 0
    throw error
  }
}

// ---- actions the views call ----

let counter = 0
const clientId = () => `web-${Date.now().toString(36)}-${(++counter).toString(36)}-${Math.random().toString(36).slice(2, 8)}`

export async function sendMessage(
  chatId: number,
  fields: { content?: string; reply_to_id?: number | null; file_path?: string | null },
  extra?: Partial<Msg>,
) {
  const body = {
    chat_id: chatId,
    content: fields.content ?? '',
    client_message_id: clientId(),
    ...(fields.reply_to_id ? { reply_to_id: fields.reply_to_id } : {}),
    ...(fields.file_path ? { file_path: fields.file_path } : {}),
  }
  const view = await data(api.POST('/api.v2/api/messages/send', { body }))
  messageArrived(view)
  if (extra) patchMessage(chatId, view.message_id ?? 0, extra)
  return view
}

export async function editMessage(chatId: number, messageId: number, content: string) {
  const view = await data(api.POST('/api.v2/api/messages/{id}/edit', { params: { path: { id: messageId } }, body: { content } }))
  upsert(chatId, [view])
}

export async function deleteMessage(chatId: number, messageId: number, forAll: boolean) {
  await ok(api.DELETE('/api.v2/api/messages/{id}', { params: { path: { id: messageId } }, body: { for_all: forAll } }))
  removeMessage(chatId, messageId)
  const item = chatById(chatId)
  if (item?.last_message?.message_id === messageId) reloadChatsSoon()
}

export async function react(chatId: number, messageId: number, emoji: string | null) {
  const before = history(chatId).byId.get(messageId)?.my_reaction ?? null
  // mine at once (the counts follow from the answer or the live event, whichever comes first)
  patchMessage(chatId, messageId, { my_reaction: emoji })
  try {
    const reactions = await data(api.POST('/api.v2/api/messages/{id}/reaction', { params: { path: { id: messageId } }, body: { emoji } }))
    patchMessage(chatId, messageId, { reactions, my_reaction: emoji })
  } catch (error) {
    patchMessage(chatId, messageId, { my_reaction: before })
    throw error
  }
}

export async function forward(messageId: number, targetChatId: number) {
  const view = await data(api.POST('/api.v2/api/messages/forward', { body: { message_id: messageId, target_chat_id: targetChatId } }))
  messageArrived(view)
}

let lastTypingSent = 0
export function sendTyping(chatId: number, isTyping: boolean) {
  // channels have no typing (only their admins post, and nobody is told)
  if (chatById(chatId)?.chat_type === 'channel') return
  const now = Date.now()
  if (isTyping && now - lastTypingSent < 3000) return
  lastTypingSent = isTyping ? now : 0
  void ok(api.POST('/api.v2/api/chat/typing', { body: { chat_id: chatId, is_typing: isTyping } })).catch(() => {})
}

export async function setPinned(item: ChatListItem, pinned: boolean) {
  const body = { chat_type: item.chat_type, chat_id: item.chat_id }
  if (pinned) await ok(api.POST('/api.v2/api/pin', { body }))
  else await ok(api.DELETE('/api.v2/api/pin', { body }))
  await loadChats()
}

export async function setArchived(item: ChatListItem, archived: boolean) {
  const body = { chat_type: item.chat_type, chat_id: item.chat_id }
  if (archived) await ok(api.POST('/api.v2/api/archive', { body }))
  else await ok(api.DELETE('/api.v2/api/archive', { body }))
  await loadChats()
}
