/**
 * One socket: the user's own stream plus one stream per group or channel they belong to
 * (docs/realtime.md). Live frames that continue a stream's cursor go straight out; older ones are
 * skipped; a gap triggers a catch-up from that log (realtime/stream.ts).
 */
import type { Socket } from 'node:net'
import type { WebSocket } from 'ws'
import type { AppContext } from '../context.js'
import { isShared, stringifyShared } from '../lib/shared-json.js'
import * as chatLog from './chat-log.js'
import { CLOSE } from './close-codes.js'
import type { Frame } from './fanout.js'
import type { GatewayHooks } from './hooks.js'
import { Stream } from './stream.js'
import { textFrames } from './text-frames.js'
import * as updates from './updates.js'

/** a live frame finding more than this unsent on its socket closes it (4008): the client resumes */
const MAX_BUFFERED = 1024 * 1024
/**
 * A replay goes at the client's pace: past REPLAY_HIGH_WATER unsent bytes it waits until the
 * socket is down to REPLAY_LOW_WATER, so catching up on a long backlog never trips MAX_BUFFERED.
 */
const REPLAY_HIGH_WATER = 256 * 1024
const REPLAY_LOW_WATER = 64 * 1024
const DRAIN_POLL_MS = 10

type MemberEvent = { chat_id?: number; user_id?: number; chat_seq?: number }

/**
 * A frame's text: `JSON.stringify(frame)`, reusing the text of a message shared by its sender
 * (lib/shared-json.ts) when the frame carries one as its data (an ack) or as data.message
 * (message.new), so a send is serialized once for its ack and every socket it reaches.
 */
export function frameText(frame: { data?: unknown }): string {
  const data = frame.data
  if (typeof data === 'object' && data !== null && (isShared(data) || isShared((data as { message?: unknown }).message)))
    return stringifyShared(frame)
  return JSON.stringify(frame)
}

/**
 * Connections holding frames until the end of this burst of work. A group commit hands a socket
 * several frames at once (acks, the user's own message.new, a peer's): held and written together
 * they leave in one system call instead of one each (a profile of socket-sends had the writes at
 * about a quarter of the server's CPU). They go out once the callback that produced them and its
 * promise continuations are done (process.nextTick), before any other I/O is handled, in order.
 */
const holding = new Set<Connection>()
/**
 * Past this much held text a socket's frames are written at once, so that a big burst (many or
 * long messages to one socket in one batch) never counts against MAX_BUFFERED before the kernel
 * has taken what it can, where written frame by frame it would not have.
 */
const HOLD_LIMIT = 64 * 1024

/**
 * Writes every held frame now (also before the server's shutdown closes every socket). It runs
 * outside any handler's guard, so a socket whose write throws is closed alone, never the process.
 */
export function flushFrames() {
  const connections = [...holding]
  holding.clear()
  for (const connection of connections) {
    try {
      connection.flush()
    } catch (err) {
      connection.crashed('write', err)
    }
  }
}

/** What a connection asks of the registry that holds it. */
export interface Subscriptions {
  subscribe(connection: Connection, chatId: number): void
  unsubscribe(connection: Connection, chatId: number): void
  started(connection: Connection): void
}

/**
 * A socket: the user's own stream plus one stream per group or channel they belong to. Streams of
 * chats join and leave with the user's own `member.joined` / `member.left` updates.
 */
export class Connection {
  alive = true
  /** counted in the user's presence (so the close must uncount it) */
  present = false
  readonly user: Stream
  readonly chats = new Map<number, Stream>()
  /** chat frames that arrived before the chat streams existed */
  private early: Frame[] | null = []
  /**
   * the user's ephemeral frames (presence, typing) held back while `holds` > 0: until `ready` has
   * gone out (the first hold), and while a presence repair reads where peers stand
   */
  private heldEphemeral: Frame[] | null = []
  private holds = 1
  /** chat cursors a `resume` named before the chat streams existed */
  private resumeChats = new Map<number, number>()
  /** frames of this burst not yet written (see `holding`), and their total length (UTF-16 units, about bytes) */
  private held: string[] = []
  private heldLength = 0
  /**
   * message.new frames among `held` of messages this user sent, by the message (the object its
   * sender's request answers with), with their seq: the ack of this socket's own send takes that
   * frame's place (see `answer`)
   */
  private ownHeld = new Map<object, { index: number; seq: number }>()

  constructor(
    readonly ctx: AppContext,
    readonly userId: number,
    /** the session the socket was opened with: revoking it closes the socket */
    readonly sessionId: number,
    /** this socket's number on this instance, for the log */
    readonly id: number,
    readonly socket: WebSocket,
    private hooks: GatewayHooks,
    private registry: Subscriptions,
  ) {
    // The connection is registered (and sees live frames) before start() reads the user's seq:
    // frames of that moment wait for it, then go out only if they come after it.
    this.user = new Stream(
      {
        seqOf: (frame) => frame.seq!,
        load: (after, limit) => updates.since(ctx, userId, after, limit, hooks.renderMessages),
        emit: (frame) => this.onUserFrame(frame),
        backlogged: () => this.backlogged(),
        reset: (from, to) => this.send({ type: 'reset', data: { reason: 'pruned', missed_from: from, missed_to: to } }),
        latest: () => updates.currentSeq(ctx, userId),
        ahead: (seq) => this.send({ type: 'reset', data: { reason: 'ahead', seq } }),
        fail: (err) => this.fail(err),
      },
      true,
    )
  }

  /** Hands the frame to the socket; false if it did not go out (closed, or closed now for being too slow). */
  send(frame: Frame, text?: string): boolean {
    if (this.socket.readyState !== this.socket.OPEN) return false
    if (this.unsent() > MAX_BUFFERED) {
      this.close(CLOSE.tooSlow)
      return false
    }
    const out = text ?? frameText(frame)
    if (this.held.length === 0) {
      if (holding.size === 0) process.nextTick(flushFrames)
      holding.add(this)
    }
    this.held.push(out)
    this.heldLength += out.length
    this.ctx.metrics.frameSent()
    if (this.heldLength >= HOLD_LIMIT) this.flush()
    return true
  }

  /** About how many bytes were handed to this socket and are not on the wire yet: held for this burst, or buffered by ws. */
  private unsent() {
    return this.socket.bufferedAmount + this.heldLength
  }

  /** Writes the held frames: one frame each, all in one write. */
  flush() {
    const frames = this.held
    if (frames.length === 0) return
    this.held = []
    this.heldLength = 0
    if (this.ownHeld.size > 0) this.ownHeld.clear()
    if (this.socket.readyState !== this.socket.OPEN) return
    this.ctx.metrics.socketWritten()
    // Framed here and written to ws's own TCP socket, in one buffer (realtime/text-frames.ts).
    // ws writes its pings and its close frame straight to that socket too, as it is called, and
    // without compression its sender never holds a frame back, so the frames keep their order.
    const tcp = (this.socket as unknown as { _socket?: Socket })._socket
    if (tcp) tcp.write(textFrames(frames))
    else for (const text of frames) this.socket.send(text)
  }

  /**
   * The answer to one of the client's requests (realtime/requests.ts): an ack or an error frame
   * with its id. The ack of a send whose message.new is still held for this socket goes in that
   * frame's place, with its seq, and the message.new does not go: the socket that sent a message
   * gets it once, where its log has it (docs/realtime.md). Once that frame is written (a burst past
   * HOLD_LIMIT) the ack follows it without a seq.
   */
  answer(frame: { type: 'ack' | 'error'; id: string | number; data?: unknown; error?: unknown }): boolean {
    const own = frame.type === 'ack' && typeof frame.data === 'object' && frame.data !== null ? this.ownHeld.get(frame.data) : undefined
    if (!own) return this.send(frame as Frame, frameText(frame))
    this.ownHeld.delete(frame.data as object)
    const ack: Frame & { id: string | number } = { type: 'ack', id: frame.id, seq: own.seq, data: frame.data }
    const text = frameText(ack)
    this.heldLength += text.length - this.held[own.index].length
    this.held[own.index] = text
    return true
  }

  /** See Stream's `backlogged`: a replay waits here while the client is behind on reading. */
  backlogged(): false | Promise<boolean> {
    if (this.socket.readyState !== this.socket.OPEN) return Promise.resolve(false)
    if (this.unsent() <= REPLAY_HIGH_WATER) return false
    return new Promise((resolve) => {
      const check = () => {
        if (this.socket.readyState !== this.socket.OPEN) resolve(false)
        else if (this.unsent() <= REPLAY_LOW_WATER) resolve(true)
        else setTimeout(check, DRAIN_POLL_MS)
      }
      setTimeout(check, DRAIN_POLL_MS)
    })
  }

  close({ code, reason }: { code: number; reason: string }) {
    // what was sent before the close goes before it
    this.flush()
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) this.socket.close(code, reason)
  }

  /** A handler of this socket threw: the socket goes, the process stays. */
  crashed(what: string, err: unknown) {
    this.ctx.log.error({ err, userId: this.userId, socketId: this.id, during: what }, 'websocket handler failed; closing that socket')
    this.close(CLOSE.internalError)
  }

  private fail(err: unknown) {
    this.ctx.log.warn({ err, userId: this.userId, socketId: this.id }, 'replay failed; closing the socket so the client resumes')
    this.close(CLOSE.replayFailed)
  }

  private onUserFrame(frame: Frame) {
    const sent = this.send(frame)
    if (frame.type === 'message.new') {
      if (!sent) return
      const message = (frame.data as { message?: { sender_id?: number } }).message
      // my own message, held: the ack of the send that made it (if it came from this socket) takes its place
      if (message?.sender_id === this.userId) {
        if (this.held.length > 0) this.ownHeld.set(message, { index: this.held.length - 1, seq: frame.seq! })
        return
      }
      // delivered means this device got it: a frame dropped with a closing socket is not
      return this.noteDelivery(frame.data)
    }
    const data = frame.data as MemberEvent
    if (data?.user_id !== this.userId || typeof data.chat_id !== 'number') return
    if (frame.type === 'member.joined') this.joinChat(data.chat_id, data.chat_seq ?? 0)
    else if (frame.type === 'member.left') this.leaveChat(data.chat_id)
  }

  /** A recipient's device was handed a message: the first time stamps delivered_at. */
  private noteDelivery(data: unknown) {
    const message = (data as { message?: { message_id?: number; sender_id?: number; delivered_at?: string | null } }).message
    if (message?.message_id && message.sender_id !== this.userId && !message.delivered_at) this.hooks.deliveries.add(message.message_id)
  }

  /** Starts following a chat's log from `cursor`. */
  joinChat(chatId: number, cursor: number) {
    if (this.chats.has(chatId)) return
    const stream = new Stream({
      seqOf: (frame) => frame.chat_seq!,
      load: (after, limit) => chatLog.since(this.ctx.db, chatId, after, limit),
      emit: (frame, text) => this.send(frame, text),
      backlogged: () => this.backlogged(),
      reset: (from, to) => this.send({ type: 'reset', data: { chat_id: chatId, reason: 'pruned', missed_from: from, missed_to: to } }),
      latest: () => chatLog.currentSeq(this.ctx.db, chatId),
      ahead: (chatSeq) => this.send({ type: 'reset', data: { chat_id: chatId, reason: 'ahead', chat_seq: chatSeq } }),
      fail: (err) => this.fail(err),
    })
    stream.cursor = cursor
    this.chats.set(chatId, stream)
    this.registry.subscribe(this, chatId)
    const resumed = this.resumeChats.get(chatId)
    if (resumed === undefined) return
    this.resumeChats.delete(chatId)
    void stream.catchUp(resumed)
  }

  leaveChat(chatId: number) {
    if (!this.chats.delete(chatId)) return
    this.registry.unsubscribe(this, chatId)
  }

  /** A live frame for the user. */
  deliverUser(frame: Frame) {
    if (frame.seq === undefined) {
      if (this.heldEphemeral) return void this.heldEphemeral.push(frame)
      return this.send(frame)
    }
    this.user.deliver(frame)
  }

  /** A live frame of a group or channel (serialized once for all its subscribers: `text`). */
  deliverChat(frame: Frame, text?: string) {
    if (this.early) return void this.early.push(frame)
    const stream = this.chats.get(frame.chat_id!)
    if (!stream) return
    if (frame.chat_seq !== undefined) return stream.deliver(frame, text)
    // ephemeral (typing): not back to the member who caused it
    if ((frame.data as MemberEvent)?.user_id !== this.userId) this.send(frame, text)
  }

  /**
   * `{"type":"resume","seq":N,"chats":{"<chat_id>":M}}`: replays after N, and after M in each chat
   * named that the user follows (a cursor past a log's end is answered by the stream: see Stream).
   * Synchronous, so that a resume sent as the socket opens positions the streams before they open.
   */
  resume(seq: number | undefined, chats: Map<number, number>) {
    for (const [chatId, cursor] of chats) {
      const stream = this.chats.get(chatId)
      if (stream) void stream.catchUp(cursor)
      else if (this.early) this.resumeChats.set(chatId, cursor)
    }
    if (seq !== undefined) void this.user.catchUp(seq)
  }

  /** Every stream replays from its cursor and the peers' presence is sent again (frames may have been lost). */
  resync() {
    void this.user.catchUp()
    for (const stream of this.chats.values()) void stream.catchUp()
    void this.repairPresence()
  }

  /**
   * Sends where each peer stands now. Presence frames arriving during the read wait behind it: one
   * of them may carry a change the read missed, so it must be the last word.
   */
  private async repairPresence() {
    this.holds++
    const held = (this.heldEphemeral ??= [])
    const at = held.length
    try {
      held.splice(at, 0, ...(await this.hooks.presence.peersOf(this.userId)))
    } catch (err) {
      this.ctx.log.warn({ err, userId: this.userId }, 'presence repair failed')
    } finally {
      this.release()
    }
  }

  /** Ends one hold on ephemeral frames; the last sends what waited, in order. */
  private release() {
    if (--this.holds > 0) return
    const held = this.heldEphemeral ?? []
    this.heldEphemeral = null
    for (const frame of held) this.send(frame)
  }

  /**
   * Opens the user's stream at their current seq (or where a `resume` that raced in put it) and a
   * stream for each of their groups and channels at its current chat seq, says `ready` with those
   * positions, then delivers whatever arrived meanwhile.
   */
  async start() {
    try {
      await this.open()
    } catch (err) {
      return this.fail(err)
    }
    await this.user.catchUp()
  }

  private async open() {
    await this.user.open(async () => {
      const [seq, memberships] = await Promise.all([
        updates.currentSeq(this.ctx, this.userId),
        chatLog.memberships(this.ctx.db, this.userId),
      ])
      for (const { chat_id, event_seq } of memberships) this.joinChat(chat_id, event_seq)
      this.send({
        type: 'ready',
        data: { user_id: this.userId, seq, chats: Object.fromEntries(memberships.map((m) => [m.chat_id, m.event_seq])) },
      })
      const early = this.early ?? []
      this.early = null
      this.release()
      this.registry.started(this)
      for (const frame of early) this.deliverChat(frame)
      return { seq, value: undefined }
    })
  }
}
