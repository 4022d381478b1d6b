/**
 * A WebSocket for fuzzing: keeps every JSON frame it receives (`frames`), notes anything else
 * (`junk`: binary frames, text that is not JSON), remembers how it closed, and waits for a
 * condition without ever throwing. The gateway's and the signaling service's fuzz passes share it.
 */
import { WebSocket } from 'ws'

export class RawSocket {
  readonly frames: any[] = []
  readonly junk: string[] = []
  closed: { code: number; reason: string } | null = null
  private wake: (() => void) | null = null

  constructor(readonly ws: WebSocket) {
    ws.on('message', (raw, isBinary) => {
      const value = String(raw)
      try {
        if (isBinary) throw new Error('binary')
        const frame = JSON.parse(value)
        this.received(frame)
        this.frames.push(frame)
      } catch {
        this.junk.push(`${isBinary ? 'a binary frame' : 'a text frame that is not JSON'}: ${value.slice(0, 200)}`)
      }
      this.wake?.()
    })
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) }
      this.wake?.()
    })
    ws.on('error', () => undefined)
  }

  /** Called with each JSON frame as it arrives (subclasses count what they need). */
  protected received(_frame: any) {}

  /**
   * Connects to `url` and resolves once the socket is open (an upgrade refused rejects, with its
   * status). The socket listens from the start: a frame sent right after the upgrade is kept.
   */
  static async connect<T extends RawSocket>(this: new (ws: WebSocket) => T, url: string, headers: Record<string, string> = {}): Promise<T> {
    const ws = new WebSocket(url, { headers })
    const socket = new this(ws)
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve())
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)))
      ws.once('error', reject)
    })
    return socket
  }

  /** Waits until `done(frames)` or the socket closes; false on timeout. */
  async until(done: (frames: any[]) => boolean, timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    while (!done(this.frames) && !this.closed) {
      const left = deadline - Date.now()
      if (left <= 0) return false
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
    return true
  }

  close() {
    this.ws.terminate()
  }
}
