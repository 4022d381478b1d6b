/** Set-up through Tern's real HTTP API (users and chats that the server itself created), and its gateway's sockets. */
import WebSocket from 'ws'
import type { RequestSpec } from './http-client.js'

export const V2 = '/api.v2/api'

export interface BenchUser {
  id: number
  username: string
  token: string
}

export async function call<T>(url: string, init: { method?: string; token?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${response.status} ${text.slice(0, 300)}`)
  return JSON.parse(text) as T
}

export async function register(baseUrl: string, username: string): Promise<BenchUser> {
  const { data } = await call<{ data: { user: { user_id: number }; session_token: string } }>(`${baseUrl}${V2}/auth/register`, {
    body: { username, password: 'bench password 1' },
  })
  return { id: data.user.user_id, username, token: data.session_token }
}

/** Registers `count` users named `<prefix>_<i>`, a few at a time (each is an argon2 hash). */
export async function registerMany(baseUrl: string, prefix: string, count: number): Promise<BenchUser[]> {
  const users: BenchUser[] = []
  for (let i = 0; i < count; i += 4) {
    const batch = Array.from({ length: Math.min(4, count - i) }, (_, j) => register(baseUrl, `${prefix}_${i + j}`))
    users.push(...(await Promise.all(batch)))
  }
  return users
}

/** The personal chat of `me` and `other`, created through the API; returns its id. */
export async function openChat(baseUrl: string, me: BenchUser, other: BenchUser): Promise<number> {
  const { data } = await call<{ data: { chat_id: number } }>(`${baseUrl}${V2}/chat/create`, {
    token: me.token,
    body: { user_id: other.id },
  })
  return data.chat_id
}

/** `count` sender → receiver pairs of new users (`prefix`), each pair in a personal chat of its own (socket-sends' load). */
export async function openPairs(
  baseUrl: string,
  prefix: string,
  count: number,
): Promise<{ senderToken: string; receiverToken: string; chatId: number }[]> {
  const users = await registerMany(baseUrl, prefix, count * 2)
  const pairs: { senderToken: string; receiverToken: string; chatId: number }[] = []
  for (let i = 0; i < count; i++) {
    const [sender, receiver] = [users[2 * i], users[2 * i + 1]]
    pairs.push({ senderToken: sender.token, receiverToken: receiver.token, chatId: await openChat(baseUrl, sender, receiver) })
  }
  return pairs
}

export async function sendMessage(baseUrl: string, me: BenchUser, chatId: number, content: string): Promise<number> {
  const { data } = await call<{ data: { message_id: number } }>(`${baseUrl}${V2}/messages/send`, {
    token: me.token,
    body: { chat_id: chatId, content },
  })
  return data.message_id
}

/** Signs in with a password (an admin made by ADMIN_USERNAME / ADMIN_PASSWORD, say). */
export async function login(baseUrl: string, username: string, password: string): Promise<BenchUser> {
  const { data } = await call<{ data: { user: { user_id: number }; session_token: string } }>(`${baseUrl}${V2}/auth/login`, {
    body: { login: username, password },
  })
  return { id: data.user.user_id, username, token: data.session_token }
}

/** A message body of typical chat length (about 100 bytes of JSON with the chat id). */
export const MESSAGE_TEXT = 'Benchmark message: the quick brown fox jumps over the lazy dog, twice.'

/**
 * One `POST messages/send` per pair of `users` (0 → 1, 2 → 3, …), each into the pair's personal
 * chat (opened here): the request set a send load cycles through.
 */
export async function sendRequests(baseUrl: string, users: BenchUser[], pairs: number): Promise<RequestSpec[]> {
  const requests: RequestSpec[] = []
  for (let i = 0; i < pairs; i++) {
    const [sender, receiver] = [users[2 * i], users[2 * i + 1]]
    requests.push({
      method: 'POST',
      path: `${V2}/messages/send`,
      headers: { authorization: `Bearer ${sender.token}` },
      body: { chat_id: await openChat(baseUrl, sender, receiver), content: MESSAGE_TEXT },
    })
  }
  return requests
}

/**
 * A gateway socket of `token`'s session, resolved once its first frame (`ready`) is in. A socket
 * that never says ready rejects after 10 s instead of hanging the bench.
 */
export function openSocket(port: number, token: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}${V2}/ws?token=${encodeURIComponent(token)}`, { perMessageDeflate: false })
    const timer = setTimeout(() => {
      socket.terminate()
      reject(new Error('no ready frame within 10 s'))
    }, 10_000)
    socket.once('error', reject)
    socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)))
    socket.once('message', (raw) => {
      clearTimeout(timer)
      if (!String(raw).includes('"ready"')) return reject(new Error(`first frame is not ready: ${String(raw).slice(0, 300)}`))
      resolve(socket)
    })
  })
}
