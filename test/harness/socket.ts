/** A WebSocket test client: waits for frames by type, with timeouts. */
import assert from 'node:assert/strict'
import { after, afterEach } from 'node:test'
import WebSocket from 'ws'

/** Every socket a test file opened; all are closed when the file ends. */
const opened = new Set<TestSocket>()
after(async () => {
  await Promise.all([...opened].map((socket) => socket.close()))
})

/**
 * Sockets on which a test asserted that nothing arrived (assertNone) and has not yet shown that
 * something does arrive (assertDelivered): a test that ends with one fails, since a socket that
 * receives nothing at all would pass any "nothing arrived".
 */
const unproven = new Map<TestSocket, string[]>()
afterEach(() => {
  if (unproven.size === 0) return
  const what = [...unproven.values()].flat().join(', ')
  unproven.clear()
  throw new Error(`assertNone (${what}) without a positive control: show with assertDelivered that the socket does get frames`)
})

export interface Frame {
  type: string
  seq?: number
  chat_id?: number
  chat_seq?: number
  data: any
}

export class TestSocket {
  /** frames not yet taken by next() or drain() */
  readonly frames: Frame[] = []
  /** every frame, in the order it arrived (never taken) */
  readonly received: Frame[] = []
  private waiters: (() => void)[] = []
  closed: { code: number; reason: string } | null = null

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      const frame = JSON.parse(String(raw))
      this.frames.push(frame)
      this.received.push(frame)
      for (const wake of this.waiters.splice(0)) wake()
    })
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) }
      for (const wake of this.waiters.splice(0)) wake()
    })
  }

  /** Connects (token in the Authorization header, or `via: 'query'`) and waits for `ready`; closed at the end of the test file. */
  static async connect(
    baseUrl: string,
    token: string,
    via: 'header' | 'query' = 'header',
    query: Record<string, string> = {},
  ): Promise<TestSocket> {
    const params = new URLSearchParams(query)
    if (via === 'query') params.set('token', token)
    const url = `${baseUrl.replace(/^http/, 'ws')}/api.v2/api/ws${params.size ? `?${params}` : ''}`
    const ws = new WebSocket(url, via === 'header' ? { headers: { authorization: `Bearer ${token}` } } : {})
    // Listen before `open`: the server's first frame can arrive in the same chunk as the upgrade.
    const socket = new TestSocket(ws)
    opened.add(socket)
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve())
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)))
      ws.once('error', reject)
    })
    await socket.next('ready')
    return socket
  }

  send(frame: unknown) {
    this.ws.send(JSON.stringify(frame))
  }

  private requestIds = 0

  /** Sends a request `{type, id, data}` (the id made up unless given) and waits for its answer: the ack or error frame with its id. */
  async request(
    type: string,
    data: unknown,
    id: string | number = `r${++this.requestIds}`,
    timeoutMs = 5000,
  ): Promise<Frame & { id: string | number; error?: { code: string; message: string; retry_after?: number } }> {
    this.send({ type, id, data })
    return this.answer(id, timeoutMs)
  }

  /** The answer (ack or error frame) to the request with this id. */
  async answer(id: string | number, timeoutMs = 5000) {
    const isAnswer = (f: Frame & { id?: unknown }) => (f.type === 'ack' || f.type === 'error') && f.id === id
    return (await this.nextWhere(isAnswer, `the answer to request ${JSON.stringify(id)}`, timeoutMs)) as Frame & {
      id: string | number
      error?: { code: string; message: string; retry_after?: number }
    }
  }

  /** The next not-yet-taken frame of this type. */
  next(type: string, timeoutMs = 3000): Promise<Frame> {
    return this.nextWhere((f) => f.type === type, `${type} frame`, timeoutMs)
  }

  /** The next not-yet-taken frame that matches. */
  async nextWhere(matches: (frame: Frame) => boolean, what: string, timeoutMs = 3000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const index = this.frames.findIndex(matches)
      if (index >= 0) return this.frames.splice(index, 1)[0]
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) while waiting for ${what}`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms; have: ${JSON.stringify(this.frames.map((f) => f.type))}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  /** The first frame of this type among those received from position `mark` on (taken if not yet taken). */
  async nextSince(mark: number, type: string, timeoutMs = 3000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const frame = this.received.slice(mark).find((f) => f.type === type)
      if (frame) {
        const index = this.frames.indexOf(frame)
        if (index >= 0) this.frames.splice(index, 1)
        return frame
      }
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) while waiting for ${type}`)
      const left = deadline - Date.now()
      if (left <= 0)
        throw new Error(
          `no ${type} frame within ${timeoutMs} ms of the control; have: ${JSON.stringify(this.received.slice(mark).map((f) => f.type))}`,
        )
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  /** Waits `ms` and returns (and takes) every frame of this type that arrived. */
  async drain(type: string, ms = 200): Promise<Frame[]> {
    await new Promise((resolve) => setTimeout(resolve, ms))
    const taken = this.frames.filter((f) => f.type === type)
    this.frames.splice(0, this.frames.length, ...this.frames.filter((f) => f.type !== type))
    return taken
  }

  /** Waits until the server closes this socket; its close code and reason. */
  async closing(timeoutMs = 3000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs
    while (!this.closed) {
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`the socket was not closed within ${timeoutMs} ms`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
    return this.closed
  }

  async close() {
    if (this.closed) return
    const done = new Promise((resolve) => this.ws.once('close', resolve))
    this.ws.close()
    await done
  }
}

/**
 * Waits `ms` and asserts that this socket got no frame of this type meanwhile. The same test must
 * then show, with assertDelivered, that the socket does get frames (or it fails).
 */
export async function assertNone(socket: TestSocket, type: string, ms = 300, what = type) {
  assert.deepEqual(await socket.drain(type, ms), [], `no ${what} frame expected`)
  unproven.set(socket, [...(unproven.get(socket) ?? []), what])
}

/**
 * The positive control beside an assertNone: `action` must make a frame of `type` reach every one
 * of `sockets` (a frame that arrives after the action starts; earlier ones do not count). Returns
 * those frames, one per socket.
 */
export async function assertDelivered(
  sockets: TestSocket | TestSocket[],
  type: string,
  action: () => Promise<unknown>,
  timeoutMs = 3000,
): Promise<Frame[]> {
  const list = Array.isArray(sockets) ? sockets : [sockets]
  const marks = list.map((socket) => socket.received.length)
  await action()
  const frames: Frame[] = []
  for (const [i, socket] of list.entries()) {
    frames.push(await socket.nextSince(marks[i], type, timeoutMs))
    unproven.delete(socket)
  }
  return frames
}

/**
 * Opens a socket with `open` 20 times, one after another, while each of `steps` runs over and over
 * (sends, connections coming and going: events reaching the user meanwhile), and checks every
 * socket with assertOpenedInOrder.
 */
export async function assertOpeningsInOrder(open: () => Promise<TestSocket>, steps: (() => Promise<unknown>)[]) {
  let running = true
  const flowing = Promise.all(
    steps.map(async (step) => {
      while (running) await step()
    }),
  )
  try {
    for (let i = 0; i < 20; i++) {
      const socket = await open()
      await new Promise((resolve) => setTimeout(resolve, 30))
      assertOpenedInOrder(socket)
      await socket.close()
    }
  } finally {
    running = false
    await flowing
  }
}

/**
 * A fresh socket (no resume) gets `ready` before any other frame, and then exactly the logged
 * frames after ready's seq, contiguous: none it was not asked for, none twice.
 */
function assertOpenedInOrder(socket: TestSocket) {
  const [first] = socket.received
  assert.equal(first?.type, 'ready', `ready comes first; got ${JSON.stringify(socket.received.map((f) => [f.type, f.seq ?? f.data?.seq]))}`)
  const from = first.data.seq as number
  const seqs = socket.received.filter((f) => f.seq !== undefined).map((f) => f.seq)
  assert.deepEqual(
    seqs,
    seqs.map((_, k) => from + 1 + k),
    'the frames after ready continue its seq',
  )
}
