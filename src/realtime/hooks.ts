/** What the gateway needs from the modules, handed to it when it is registered (modules/updates/gateway.ts). */
import type { Frame } from './fanout.js'
import type { RenderMessages } from './updates.js'

export interface GatewayHooks {
  /** whose session a token is; null refuses the socket (401 at the upgrade, 4001 if revoked meanwhile) */
  authenticate(token: string): Promise<{ userId: number; sessionId: number } | null>
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
}
