/**
 * Who is in which room, and delivery of frames to a peer wherever its socket is.
 *
 * In memory by default. With REDIS_URL the room membership is a Redis hash per room (peer id →
 * the peer and the instance holding its socket), and a frame for a peer on another instance goes
 * through that instance's pub/sub channel, so several video instances share rooms.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { MediaState, PeerView } from './protocol.js'

/** hands a serialized frame to a local socket */
export type Deliver = (text: string) => void
/** closes a local socket that was removed from its room from outside (an HTTP leave) */
export type Drop = () => void

/**
 * The main service ended a session (`sessionId`), or every session of a user (a ban: no
 * `sessionId`): the sockets they opened close, and tickets of theirs that expire at or before
 * `ticketsUntil` (every ticket issued before the end, whose expiry is at most its issue plus the
 * ticket lifetime) are refused. `code` and `reason` are the close frame's.
 */
export interface SessionEnd {
  userId: number
  sessionId?: number
  ticketsUntil: number
  code: number
  reason: string
}
export type SessionEndHandler = (end: SessionEnd) => void

export interface RoomStore {
  /** adds a peer whose socket is on this instance; answers the peers that were there before */
  add(room: string, peer: PeerView, deliver: Deliver, drop?: Drop): Promise<PeerView[]>
  /** removes a peer; answers whether it was there */
  remove(room: string, peerId: string): Promise<boolean>
  /** hands a frame to one peer of the room; false when it is not in the room */
  send(room: string, to: string, text: string): Promise<boolean>
  /** hands a frame to every peer of the room but `except` */
  broadcast(room: string, except: string | null, text: string): Promise<void>
  setMedia(room: string, peerId: string, media: MediaState): Promise<void>
  /** peers in the room (any instance) */
  peers(room: string): Promise<PeerView[]>
  /** closes every socket of `userId` in the room, on whichever instance; answers how many there were */
  kick(room: string, userId: number): Promise<number>
  /**
   * Marks a ticket (its random `n`) used until its expiry `exp` (epoch ms); false when it was used
   * already. A ticket therefore lets in one socket only, on any instance.
   */
  consumeTicket(nonce: string, exp: number, now: number): Promise<boolean>
  /** Remembers an ended session (until its tickets have expired) and tells every instance, this one included, through onSessionEnd. */
  endSession(end: SessionEnd, now: number): Promise<void>
  /** The handler told of every ended session (on any instance). */
  onSessionEnd(handler: SessionEndHandler): void
  /** Whether a ticket (its user, session and expiry) belongs to a session that has ended. */
  sessionEnded(userId: number, sessionId: number | undefined, exp: number, now: number): Promise<boolean>
  close(): Promise<void>
}

/** an ended session is remembered this much past its tickets' expiry (clocks of the two services may differ a little) */
const ENDED_SLACK_MS = 60_000
/** how many ended sessions and users one instance remembers at most */
const MAX_ENDED = 200_000

/** Ended sessions (id → tickets until) and users (id → tickets until) in memory, forgotten once their tickets expired. */
function endedMemory() {
  const sessions = new Map<number, number>()
  const users = new Map<number, number>()
  const remember = (map: Map<number, number>, id: number, until: number, now: number) => {
    if (map.size >= MAX_ENDED) for (const [key, value] of map) if (value + ENDED_SLACK_MS <= now || map.size >= MAX_ENDED) map.delete(key)
    map.set(id, Math.max(map.get(id) ?? 0, until))
  }
  const live = (map: Map<number, number>, id: number, now: number): number | undefined => {
    const until = map.get(id)
    if (until === undefined) return undefined
    if (until + ENDED_SLACK_MS <= now) {
      map.delete(id)
      return undefined
    }
    return until
  }
  return {
    record(end: SessionEnd, now: number) {
      if (end.sessionId === undefined) remember(users, end.userId, end.ticketsUntil, now)
      else remember(sessions, end.sessionId, end.ticketsUntil, now)
    },
    ended(userId: number, sessionId: number | undefined, exp: number, now: number): boolean {
      const userUntil = live(users, userId, now)
      if (userUntil !== undefined && exp <= userUntil) return true
      if (sessionId === undefined) return false
      const sessionUntil = live(sessions, sessionId, now)
      return sessionUntil !== undefined && exp <= sessionUntil
    },
    clear() {
      sessions.clear()
      users.clear()
    },
  }
}

/** how many used tickets one instance remembers at most (each is forgotten at its expiry anyway) */
const MAX_USED_TICKETS = 200_000

export function createLocalRooms(): RoomStore {
  const rooms = new Map<string, Map<string, { peer: PeerView; deliver: Deliver; drop?: Drop }>>()
  /** used ticket nonce → its expiry; insertion order is roughly expiry order, so pruning stops early */
  const used = new Map<string, number>()
  const ended = endedMemory()
  const endHandlers: SessionEndHandler[] = []
  return {
    async add(room, peer, deliver, drop) {
      let members = rooms.get(room)
      if (!members) rooms.set(room, (members = new Map()))
      const before = [...members.values()].map((m) => m.peer)
      members.set(peer.peer_id, { peer, deliver, drop })
      return before
    },
    async remove(room, peerId) {
      const members = rooms.get(room)
      const had = members?.delete(peerId) ?? false
      if (members && members.size === 0) rooms.delete(room)
      return had
    },
    async send(room, to, text) {
      const member = rooms.get(room)?.get(to)
      if (!member) return false
      member.deliver(text)
      return true
    },
    async broadcast(room, except, text) {
      const members = rooms.get(room)
      if (!members) return
      for (const [id, member] of members) if (id !== except) member.deliver(text)
    },
    async setMedia(room, peerId, media) {
      const member = rooms.get(room)?.get(peerId)
      if (member) member.peer = { ...member.peer, media }
    },
    async peers(room) {
      return [...(rooms.get(room)?.values() ?? [])].map((m) => m.peer)
    },
    async kick(room, userId) {
      const mine = [...(rooms.get(room)?.values() ?? [])].filter((m) => m.peer.user_id === userId)
      for (const member of mine) member.drop?.()
      return mine.length
    },
    async consumeTicket(nonce, exp, now) {
      for (const [n, until] of used) {
        if (until > now && used.size < MAX_USED_TICKETS) break
        used.delete(n)
      }
      if (used.has(nonce)) return false
      used.set(nonce, exp)
      return true
    },
    async endSession(end, now) {
      ended.record(end, now)
      for (const handler of endHandlers) handler(end)
    },
    onSessionEnd(handler) {
      endHandlers.push(handler)
    },
    async sessionEnded(userId, sessionId, exp, now) {
      return ended.ended(userId, sessionId, exp, now)
    },
    async close() {
      rooms.clear()
      used.clear()
      ended.clear()
      endHandlers.length = 0
    },
  }
}

interface Stored extends PeerView {
  instance: string
}

/** a room's hash outlives its last change by this long (peers of a crashed instance do not stay for ever) */
const ROOM_TTL_SECONDS = 24 * 3600

export async function createRedisRooms(options: { url: string; prefix: string; log: Logger }): Promise<RoomStore> {
  const instance = randomBytes(8).toString('hex')
  const pub = new Redis(options.url, { maxRetriesPerRequest: 3 })
  const sub = new Redis(options.url, { maxRetriesPerRequest: 3 })
  pub.on('error', (err) => options.log.warn({ err }, 'video: redis connection error'))
  sub.on('error', (err) => options.log.warn({ err }, 'video: redis subscriber error'))
  const roomKey = (room: string) => `${options.prefix}video:room:${room}`
  const channel = (id: string) => `${options.prefix}video:instance:${id}`
  /** every instance hears of ended sessions here */
  const endsChannel = `${options.prefix}video:session-ends`
  const endedKey = (end: { userId: number; sessionId?: number }) =>
    end.sessionId === undefined
      ? `${options.prefix}video:ended:user:${end.userId}`
      : `${options.prefix}video:ended:session:${end.sessionId}`
  const endHandlers: SessionEndHandler[] = []
  /** the sockets on this instance: room → peer → deliver */
  const local = new Map<string, Map<string, Deliver>>()
  const drops = new Map<string, Drop>()
  const deliverLocal = (room: string, to: string, text: string) => {
    const deliver = local.get(room)?.get(to)
    if (deliver) deliver(text)
  }
  const dropLocal = (room: string, peerId: string) => {
    if (local.get(room)?.has(peerId)) drops.get(peerId)?.()
  }
  sub.on('message', (from: string, message: string) => {
    try {
      if (from === endsChannel) {
        const end = JSON.parse(message) as SessionEnd
        for (const handler of endHandlers) handler(end)
        return
      }
      const { room, to, text, kick } = JSON.parse(message) as { room: string; to: string[]; text?: string; kick?: boolean }
      for (const id of to) {
        if (kick) dropLocal(room, id)
        else if (typeof text === 'string') deliverLocal(room, id, text)
      }
    } catch (err) {
      options.log.warn({ err }, 'video: bad relay message')
    }
  })
  await sub.subscribe(channel(instance), endsChannel)
  const parse = (raw: string): Stored | null => {
    try {
      return JSON.parse(raw) as Stored
    } catch {
      return null
    }
  }
  const all = async (room: string): Promise<Stored[]> =>
    Object.values(await pub.hgetall(roomKey(room)))
      .map(parse)
      .filter((p): p is Stored => p !== null)
  const view = ({ instance: _instance, ...peer }: Stored): PeerView => peer
  const route = async (room: string, targets: Stored[], text: string) => {
    const remote = new Map<string, string[]>()
    for (const target of targets) {
      if (target.instance === instance) deliverLocal(room, target.peer_id, text)
      else remote.set(target.instance, [...(remote.get(target.instance) ?? []), target.peer_id])
    }
    await Promise.all([...remote].map(([id, to]) => pub.publish(channel(id), JSON.stringify({ room, to, text }))))
  }
  return {
    async add(room, peer, deliver, drop) {
      let mine = local.get(room)
      if (!mine) local.set(room, (mine = new Map()))
      mine.set(peer.peer_id, deliver)
      if (drop) drops.set(peer.peer_id, drop)
      const before = await all(room)
      await pub
        .multi()
        .hset(roomKey(room), peer.peer_id, JSON.stringify({ ...peer, instance }))
        .expire(roomKey(room), ROOM_TTL_SECONDS)
        .exec()
      return before.filter((p) => p.peer_id !== peer.peer_id).map(view)
    },
    async remove(room, peerId) {
      const mine = local.get(room)
      mine?.delete(peerId)
      drops.delete(peerId)
      if (mine && mine.size === 0) local.delete(room)
      return (await pub.hdel(roomKey(room), peerId)) > 0
    },
    async send(room, to, text) {
      const raw = await pub.hget(roomKey(room), to)
      const target = raw ? parse(raw) : null
      if (!target) return false
      await route(room, [target], text)
      return true
    },
    async broadcast(room, except, text) {
      await route(
        room,
        (await all(room)).filter((p) => p.peer_id !== except),
        text,
      )
    },
    async setMedia(room, peerId, media) {
      const raw = await pub.hget(roomKey(room), peerId)
      const peer = raw ? parse(raw) : null
      if (peer) await pub.hset(roomKey(room), peerId, JSON.stringify({ ...peer, media }))
    },
    async peers(room) {
      return (await all(room)).map(view)
    },
    async kick(room, userId) {
      const targets = (await all(room)).filter((p) => p.user_id === userId)
      const remote = new Map<string, string[]>()
      for (const target of targets) {
        if (target.instance === instance) dropLocal(room, target.peer_id)
        else remote.set(target.instance, [...(remote.get(target.instance) ?? []), target.peer_id])
      }
      await Promise.all([...remote].map(([id, to]) => pub.publish(channel(id), JSON.stringify({ room, to, kick: true }))))
      return targets.length
    },
    async consumeTicket(nonce, exp, now) {
      // SET NX with the ticket's remaining life: the first socket on any instance wins
      const set = await pub.set(`${options.prefix}video:ticket:${nonce}`, '1', 'PX', Math.max(1, exp - now), 'NX')
      return set === 'OK'
    },
    async endSession(end, now) {
      // remembered by every instance (a reconnect may come to another), then told to all of them
      const ttl = Math.max(ENDED_SLACK_MS, end.ticketsUntil - now + ENDED_SLACK_MS)
      const key = endedKey(end)
      const known = Number(await pub.get(key))
      if (!(known >= end.ticketsUntil)) await pub.set(key, String(end.ticketsUntil), 'PX', ttl)
      await pub.publish(endsChannel, JSON.stringify(end))
    },
    onSessionEnd(handler) {
      endHandlers.push(handler)
    },
    async sessionEnded(userId, sessionId, exp) {
      const keys = [endedKey({ userId }), ...(sessionId === undefined ? [] : [endedKey({ userId, sessionId })])]
      const found = await pub.mget(...keys)
      return found.some((until) => until !== null && exp <= Number(until))
    },
    async close() {
      endHandlers.length = 0
      // this instance's peers leave their rooms' records
      await Promise.all([...local].map(([room, peers]) => (peers.size ? pub.hdel(roomKey(room), ...peers.keys()) : 0))).catch(
        () => undefined,
      )
      local.clear()
      drops.clear()
      await sub.quit().catch(() => sub.disconnect())
      await pub.quit().catch(() => pub.disconnect())
    },
  }
}
