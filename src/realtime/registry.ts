/** Where live connections are, on this instance: by user, and by the groups and channels they follow. */
import { CLOSE } from './close-codes.js'
import type { Connection, Subscriptions } from './connection.js'

export class Registry implements Subscriptions {
  private byUser = new Map<number, Set<Connection>>()
  private byChat = new Map<number, Set<Connection>>()
  /** connections still loading their chats: they see every chat frame meanwhile */
  readonly starting = new Set<Connection>()
  /** open sockets registered here */
  size = 0

  constructor(private readonly maxPerUser: number) {}

  /** Registers a new socket; false (and the socket closed with 4029) when its user is at the cap. */
  add(connection: Connection): boolean {
    let set = this.byUser.get(connection.userId)
    if (!set) this.byUser.set(connection.userId, (set = new Set()))
    if (set.size >= this.maxPerUser) {
      connection.close(CLOSE.tooManySockets)
      return false
    }
    set.add(connection)
    this.starting.add(connection)
    this.size++
    return true
  }
  started(connection: Connection) {
    this.starting.delete(connection)
  }
  remove(connection: Connection) {
    const set = this.byUser.get(connection.userId)
    if (set?.delete(connection)) this.size--
    if (set?.size === 0) this.byUser.delete(connection.userId)
    this.starting.delete(connection)
    for (const chatId of connection.chats.keys()) this.unsubscribe(connection, chatId)
  }
  subscribe(connection: Connection, chatId: number) {
    let set = this.byChat.get(chatId)
    if (!set) this.byChat.set(chatId, (set = new Set()))
    set.add(connection)
  }
  unsubscribe(connection: Connection, chatId: number) {
    const set = this.byChat.get(chatId)
    set?.delete(connection)
    if (set?.size === 0) this.byChat.delete(chatId)
  }
  of(userId: number) {
    return this.byUser.get(userId)
  }
  ofChat(chatId: number) {
    return this.byChat.get(chatId)
  }
  all() {
    return [...this.byUser.values()].flatMap((set) => [...set])
  }
}
