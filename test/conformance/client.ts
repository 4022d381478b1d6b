/**
 * One conformance client: a user's device on the gateway (docs/realtime.md). It keeps its cursors
 * (the user's seq, each group's and channel's chat_seq), reconnects after every drop with those
 * cursors in the upgrade URL (so the server owes it the replay first and nothing twice), and keeps
 * every logged frame it was handed, in arrival order, for the final comparison with the server's
 * logs. Drops are made here: a close, an abrupt terminate, or a half-open socket (the client stops
 * reading, so it answers no ping and the server must find it dead).
 */
import WebSocket from 'ws'
import type { Cluster, Instance } from './cluster.js'

export interface Logged {
  type: string
  seq?: number
  chat_id?: number
  chat_seq?: number
  data: any
}

/** Something the client saw that the protocol forbids, at the moment it saw it. */
export interface Violation {
  client: number
  what: string
  frame?: unknown
}

export interface ClientFigures {
  connects: number
  drops: { close: number; terminate: number; halfOpen: number }
  /** half-open sockets the server closed by itself (heartbeat) */
  halfOpenDetected: number
  /** reconnects that resumed from a cursor (every connect after the first) */
  resumes: number
  /** resumes on another instance than the socket before */
  resumesElsewhere: number
  /** connections lost to an instance's death */
  serverLost: number
  /** logged frames handled */
  events: number
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export class ConformanceClient {
  /** the user's own log: every logged frame handed over, in arrival order */
  readonly userLog: Logged[] = []
  /** each group's and channel's log, in arrival order */
  readonly chatLogs = new Map<number, Logged[]>()
  seq = 0
  readonly chatSeqs = new Map<number, number>()
  readonly violations: Violation[] = []
  readonly figures: ClientFigures = {
    connects: 0,
    drops: { close: 0, terminate: 0, halfOpen: 0 },
    halfOpenDetected: 0,
    resumes: 0,
    resumesElsewhere: 0,
    serverLost: 0,
    events: 0,
  }

  private ws: WebSocket | null = null
  private instance: Instance | null = null
  private running = false
  private loop: Promise<void> | null = null
  /** set while this client is making its own socket fail (so the close is not the server's doing) */
  private dropping: 'close' | 'terminate' | 'halfOpen' | null = null
  private readyWaiters: (() => void)[] = []
  private connected = false

  constructor(
    readonly index: number,
    readonly userId: number,
    readonly token: string,
    /** the groups and channel this user is in (membership does not change during a run) */
    chats: number[],
    private readonly cluster: Cluster,
    private readonly heartbeatSeconds: number,
  ) {
    for (const chatId of chats) {
      this.chatSeqs.set(chatId, 0)
      this.chatLogs.set(chatId, [])
    }
  }

  private violation(what: string, frame?: unknown) {
    this.violations.push({ client: this.index, what, frame })
  }

  /** Starts the connect-and-resume loop; resolves once the first socket said ready. */
  async start() {
    this.running = true
    this.loop = this.run()
    await this.whenConnected()
  }

  whenConnected(): Promise<void> {
    if (this.connected) return Promise.resolve()
    return new Promise((resolve) => this.readyWaiters.push(resolve))
  }

  /** Ends the loop and closes the socket. */
  async stop() {
    this.running = false
    this.ws?.terminate()
    await this.loop
  }

  private url(instance: Instance) {
    const chats = [...this.chatSeqs].map(([chatId, at]) => `${chatId}:${at}`).join(',')
    return `${instance.url.replace(/^http/, 'ws')}/api.v2/api/ws?seq=${this.seq}${chats ? `&chats=${chats}` : ''}`
  }

  private pick(): Instance | null {
    const live = this.cluster.live()
    if (live.length === 0) return null
    // with two up, prefer the other one: a resume across instances
    const others = live.filter((instance) => instance !== this.instance)
    const pool = others.length > 0 && Math.random() < 0.7 ? others : live
    return pool[Math.floor(Math.random() * pool.length)]
  }

  private async run() {
    let backoff = 50
    while (this.running) {
      const instance = this.pick()
      if (!instance) {
        await sleep(100)
        continue
      }
      const before = this.instance
      const outcome = await this.session(instance)
      if (outcome === 'opened') {
        backoff = 50
        if (before && before !== instance) this.figures.resumesElsewhere++
      } else {
        await sleep(backoff)
        backoff = Math.min(backoff * 2, 1000)
      }
      this.instance = instance
      if (this.running) await sleep(Math.random() * 100)
    }
  }

  /** One socket, from the upgrade until it closes: 'opened' if it got as far as ready. */
  private session(instance: Instance): Promise<'opened' | 'failed'> {
    return new Promise((resolve) => {
      const ws = new WebSocket(this.url(instance), { headers: { authorization: `Bearer ${this.token}` } })
      this.ws = ws
      let ready = false
      const resumed = this.figures.connects > 0
      ws.on('message', (raw) => {
        let frame: Logged
        try {
          frame = JSON.parse(String(raw))
        } catch {
          return this.violation('a frame that is not JSON', String(raw).slice(0, 200))
        }
        if (frame.type === 'ready') {
          if (ready) return this.violation('a second ready on one socket', frame)
          ready = true
          this.figures.connects++
          if (resumed) this.figures.resumes++
          this.connected = true
          for (const wake of this.readyWaiters.splice(0)) wake()
          return this.checkReady(frame)
        }
        if (!ready) return this.violation('a frame before ready', frame)
        this.handle(frame)
      })
      ws.on('unexpected-response', (_req, res) => {
        res.resume()
        ws.terminate()
      })
      ws.on('error', () => {
        // ECONNREFUSED while an instance is down, ECONNRESET when it dies: the close follows
      })
      ws.on('close', (code) => {
        this.ws = null
        this.connected = false
        const mine = this.dropping
        this.dropping = null
        if (ready && !mine) {
          // not this client's doing: an instance died (1006), or the server closed it
          // (4008: a client behind on reading is told to resume, which it does)
          if (code === 1006 || code === 1001 || code === 4008) this.figures.serverLost++
          else if (this.running) this.violation(`the server closed the socket with ${code}`)
        }
        resolve(ready ? 'opened' : 'failed')
      })
    })
  }

  /** The ready frame's positions: never behind what this client already holds (that would be lost data). */
  private checkReady(frame: Logged) {
    const data = frame.data as { seq: number; chats: Record<string, number> }
    if (data.seq < this.seq) this.violation(`ready says seq ${data.seq}, but this client already holds seq ${this.seq}`, frame)
    for (const [chatId, at] of this.chatSeqs) {
      const now = data.chats[String(chatId)]
      if (now === undefined) this.violation(`ready does not list chat ${chatId}`, frame)
      else if (now < at) this.violation(`ready says chat ${chatId} is at ${now}, but this client holds ${at}`, frame)
    }
  }

  private handle(frame: Logged) {
    if (frame.type === 'reset' || frame.type === 'error') return this.violation(`a ${frame.type} frame`, frame)
    if (typeof frame.seq === 'number') {
      this.userLog.push(frame)
      this.figures.events++
      if (frame.seq !== this.seq + 1) this.violation(`user seq ${frame.seq} after ${this.seq}`, frame)
      this.seq = Math.max(this.seq, frame.seq)
      return
    }
    if (typeof frame.chat_seq === 'number' && typeof frame.chat_id === 'number') {
      const log = this.chatLogs.get(frame.chat_id)
      if (!log) return this.violation(`a frame of chat ${frame.chat_id}, which this user is not in`, frame)
      log.push(frame)
      this.figures.events++
      const at = this.chatSeqs.get(frame.chat_id)!
      if (frame.chat_seq !== at + 1) this.violation(`chat ${frame.chat_id} chat_seq ${frame.chat_seq} after ${at}`, frame)
      this.chatSeqs.set(frame.chat_id, Math.max(at, frame.chat_seq))
    }
    // typing and presence: ephemeral, not logged, not checked
  }

  /**
   * Makes the current socket fail in one of three ways; resolves once it is gone (the loop then
   * reconnects and resumes). A half-open socket stops reading (no pong to the server's pings) for
   * three heartbeats, then reads again: by then the server must have dropped it, so what is left is
   * its close (checked by the caller from halfOpenDetected).
   */
  async drop(kind: 'close' | 'terminate' | 'halfOpen'): Promise<boolean> {
    const ws = this.ws
    if (!ws || ws.readyState !== WebSocket.OPEN || !this.connected || this.dropping) return false
    this.dropping = kind
    this.figures.drops[kind]++
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()))
    if (kind === 'close') ws.close(1000, 'conformance drop')
    else if (kind === 'terminate') ws.terminate()
    else {
      const raw = (ws as unknown as { _socket: import('node:net').Socket })._socket
      raw.pause()
      await sleep(this.heartbeatSeconds * 3000)
      raw.resume()
      const detected = await Promise.race([closed.then(() => true), sleep(2000).then(() => false)])
      if (detected) this.figures.halfOpenDetected++
      else {
        // the instance may have died meanwhile (then its socket dies too); otherwise the server kept a dead socket
        if (ws.readyState === WebSocket.OPEN)
          this.violation(`a half-open socket was not dropped by the server within ${this.heartbeatSeconds * 3 + 2} s`)
        ws.terminate()
      }
    }
    await closed
    return true
  }
}
