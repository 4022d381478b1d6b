/** What the gateway needs from the modules, handed to it when it is registered (modules/updates/gateway.ts). */
import type { Turn } from '../lib/lane.js'
import type { Frame } from './fanout.js'
import type { RenderMessages } from './updates.js'

export interface GatewayHooks {
  /**
   * whose session a token is; null refuses the socket (401 at the upgrade, 4001 if revoked
   * meanwhile). `key` names the session to `requests.accept` (the token's hash: never logged).
   */
  authenticate(token: string): Promise<{ userId: number; sessionId: number; key: string } | null>
  /** renders the messages an update log refers to (message.new), as they are now */
  renderMessages: RenderMessages
  /** online state: the first socket of a user anywhere and the last one change it */
  presence: {
    /** once, before the first socket */
    start(): Promise<void>
    connected(userId: number): Promise<void>
    disconnected(userId: number): Promise<void>
    /** where the user's peers stand now (after frames may have been lost) */
    peersOf(userId: number): Promise<Frame[]>
    close(): void
  }
  /** a device was handed a message it had not been: its delivery receipt */
  deliveries: { add(messageId: number): void; flush(): Promise<void> }
  /** what a client may ask over the socket ({type, id, data}, answered by an ack or an error) */
  requests: SocketRequests
}

/**
 * Requests a socket may make (send, edit, delete, react, read): the modules answer them with the
 * same rules as their HTTP routes; the gateway only frames them (realtime/requests.ts).
 */
export interface SocketRequests {
  readonly types: ReadonlySet<string>
  /**
   * Requests of one socket in the same lane (say, sends to one chat) are done in the order they
   * came (lib/lane.ts); other lanes run alongside. `data` is the client's, not yet checked.
   */
  lane(type: string, data: unknown): string
  /**
   * One request of the socket's session (`key`: see authenticate), taken as it arrives: what does
   * not depend on the requests before it in its lane (looking up the session) starts at once, so
   * the lookups of a burst go together. The function returned gives the answer in the request's
   * turn (`turn`: its place in its lane), or throws (an AppError) to refuse it.
   */
  accept(key: string, type: string, data: unknown): (turn: Turn) => Promise<unknown>
}
