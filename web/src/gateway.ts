/**
 * The live connection (docs/realtime.md): one WebSocket to /api.v2/api/ws, authenticated by the
 * session cookie (same origin). The app keeps the last `seq` of its own log and the last
 * `chat_seq` of each group and channel; a frame at or below them was already applied and is
 * skipped, so a replay never shows a message twice. After a drop (network off, server restart,
 * a missed heartbeat) it reconnects with those positions in the URL and the server replays what
 * was missed, in order, before anything live.
 */
import { goToLogin } from './api'
import {
  clearTyping,
  connection,
  history,
  loadChats,
  loadHistory,
  me,
  messageArrived,
  openChatId,
  presenceArrived,
  readArrived,
  reloadChatsSoon,
  removeMessage,
  patchMessage,
  typingArrived,
  upsert,
  markRead,
  chatChanges,
  counts,
  notice,
} from './store'
import { messageEdited } from './bots'
import { pollArrived } from './polls'
import { storiesChanged } from './stories'
import { callArrived } from './calls'
import type { GatewayFrames } from '@tern/client'

/** Every frame the server sends, typed from its own event schemas (/asyncapi.json). */
type Frame = Exclude<GatewayFrames[keyof GatewayFrames], { type: `client.${string}` }>
type Reset = GatewayFrames['reset']['data']

const HEARTBEAT_MS = 25_000
const SILENCE_MS = 60_000

export class Gateway {
  /** the last applied seq of my log; null until the first `ready` */
  seq: number | null = null
  readonly chatSeqs = new Map<number, number>()
  private socket: WebSocket | null = null
  private attempts = 0
  private retryTimer: ReturnType<typeof setTimeout> | null = null
  private heartbeat: ReturnType<typeof setInterval> | null = null
  private lastFrameAt = 0
  private stopped = false
  /** frames applied, for tests and debugging */
  applied = 0

  constructor(private readonly onFirstReady: () => Promise<void>) {
    addEventListener('offline', () => {
      connection.value = 'offline'
      this.drop()
    })
    addEventListener('online', () => this.connectNow())
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && !this.socket && !this.stopped && navigator.onLine) this.connectNow()
    })
  }

  url(): string {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws'
    const params = new URLSearchParams()
    if (this.seq !== null) {
      params.set('seq', String(this.seq))
      const chats = [...this.chatSeqs].map(([id, seq]) => `${id}:${seq}`).join(',')
      if (chats) params.set('chats', chats)
    }
    const query = params.toString()
    return `${scheme}://${location.host}/api.v2/api/ws${query ? `?${query}` : ''}`
  }

  connect() {
    if (this.stopped || this.socket) return
    if (!navigator.onLine) {
      connection.value = 'offline'
      return
    }
    connection.value = 'connecting'
    const socket = new WebSocket(this.url())
    this.socket = socket
    this.lastFrameAt = Date.now()
    socket.onmessage = (event) => {
      this.lastFrameAt = Date.now()
      let frame: Frame
      try {
        frame = JSON.parse(String(event.data)) as Frame
      } catch {
        return
      }
      void this.handle(frame).catch((error) => console.warn('tern: a frame failed', frame.type, error))
    }
    socket.onclose = (event) => {
      if (this.socket !== socket) return
      this.socket = null
      this.stopHeartbeat()
      clearTyping()
      if (event.code === 4001) return goToLogin()
      if (event.code === 4003) {
        this.stopped = true
        connection.value = 'suspended'
        return
      }
      if (!navigator.onLine) {
        connection.value = 'offline'
        return
      }
      this.scheduleRetry()
    }
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastFrameAt > SILENCE_MS) return this.drop(true)
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: 'ping' }))
    }, HEARTBEAT_MS)
  }

  /** Closes the socket; `retry` reconnects after it (a dead connection), else waits for `online`. */
  drop(retry = false) {
    const socket = this.socket
    this.socket = null
    this.stopHeartbeat()
    clearTyping()
    if (socket) {
      socket.onclose = null
      socket.onmessage = null
      socket.close()
    }
    if (retry) this.scheduleRetry()
  }

  private connectNow() {
    if (this.retryTimer) clearTimeout(this.retryTimer)
    this.retryTimer = null
    this.attempts = 0
    this.connect()
  }

  private scheduleRetry() {
    connection.value = 'connecting'
    if (this.retryTimer) return
    const delay = Math.min(10_000, 500 * 2 ** this.attempts++) * (0.75 + Math.random() / 2)
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null
      this.connect()
    }, delay)
  }

  private stopHeartbeat() {
    if (this.heartbeat) clearInterval(this.heartbeat)
    this.heartbeat = null
  }

  private async handle(frame: Frame) {
    if (frame.type === 'ready') {
      this.attempts = 0
      connection.value = 'online'
      const first = this.seq === null
      if (first) this.seq = frame.data.seq
      for (const [id, seq] of Object.entries(frame.data.chats))
        if (seq !== undefined && !this.chatSeqs.has(Number(id))) this.chatSeqs.set(Number(id), seq)
      if (first) await this.onFirstReady()
      return
    }
    if (frame.type === 'pong' || frame.type === 'error') return
    if (frame.type === 'reset') return this.reset(frame.data)
    if ('seq' in frame && typeof frame.seq === 'number') {
      if (this.seq !== null && frame.seq <= this.seq) return
      this.seq = frame.seq
    } else if ('chat_seq' in frame && typeof frame.chat_seq === 'number' && typeof frame.chat_id === 'number') {
      const at = this.chatSeqs.get(frame.chat_id)
      if (at !== undefined && frame.chat_seq <= at) return
      this.chatSeqs.set(frame.chat_id, frame.chat_seq)
    }
    this.applied++
    this.apply(frame)
  }

  private apply(frame: Frame) {
    switch (frame.type) {
      case 'message.new': {
        const message = frame.data.message
        messageArrived(message)
        if (openChatId.value === message.chat_id && message.sender_id !== me.value?.id) void markRead(message.chat_id).catch(() => {})
        // the live view names the file but not its name, size and thumbnail: the rich history does
        if (message.file_url && history(message.chat_id).loaded) void loadHistory(message.chat_id).catch(() => {})
        break
      }
      case 'message.edited':
        upsert(frame.data.message.chat_id, [frame.data.message])
        if (frame.data.message.message_id !== null) messageEdited(frame.data.message.message_id, frame.data.message.sender_id)
        break
      case 'call.incoming':
      case 'call.answered':
      case 'call.ended':
        callArrived(frame.type, frame.data.call, me.value?.id)
        break
      case 'story.new':
      case 'story.deleted':
        storiesChanged()
        break
      case 'poll.updated':
        pollArrived(frame.data.poll)
        break
      case 'bot.callback_answer':
        // the bot's answer to a button press (answerCallbackQuery): its text, if it gave one
        if (frame.data.text) notice.value = frame.data.text
        break
      case 'message.deleted':
        removeMessage(frame.data.chat_id, frame.data.message_id)
        reloadChatsSoon()
        break
      case 'message.read':
        readArrived(frame.data.chat_id, frame.data.reader_id, frame.data.message_id)
        break
      case 'reaction.updated':
        patchMessage(frame.data.chat_id, frame.data.message_id, { reactions: counts(frame.data.reactions) })
        break
      case 'typing':
        typingArrived(frame.data.chat_id, frame.data.user_id, frame.data.is_typing)
        break
      case 'presence':
        presenceArrived(frame.data.user_id, frame.data.is_online, frame.data.last_seen ?? null)
        break
      case 'member.joined':
      case 'member.left': {
        const { chat_id: chatId, user_id: userId } = frame.data
        if (userId === me.value?.id) {
          if (frame.type === 'member.joined' && typeof frame.data.chat_seq === 'number') this.chatSeqs.set(chatId, frame.data.chat_seq)
          if (frame.type === 'member.left') this.chatSeqs.delete(chatId)
        }
        reloadChatsSoon()
        chatChanges.value++
        break
      }
      case 'chat.updated':
        reloadChatsSoon()
        chatChanges.value++
        break
      default:
        // events of parts the app does not show (contacts): their views will take them
        break
    }
  }

  private async reset(data: Reset) {
    if (typeof data.chat_id === 'number') {
      const at = Number(data.chat_seq ?? data.missed_to ?? this.chatSeqs.get(data.chat_id) ?? 0)
      this.chatSeqs.set(data.chat_id, at)
    } else {
      this.seq = Number(data.seq ?? data.missed_to ?? this.seq ?? 0)
    }
    await loadChats()
    const open = openChatId.value
    if (open !== null) await loadHistory(open)
  }
}
