/** Small request helpers shared by the messaging test files; each asserts success. */
import assert from 'node:assert/strict'
import type { TestServer, TestUser } from './server.js'
import { TestSocket } from './socket.js'

export const V2 = '/api.v2/api'
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

export interface Update {
  type: string
  seq: number
  data: any
}

/** `n` new users, with optional registration fields each. */
export const registerUsers = (server: TestServer, n: number, fields: { display_name?: string }[] = []) =>
  Promise.all(Array.from({ length: n }, (_, i) => server.registerUser(fields[i] ?? {})))

/** Sends to a user (opening the personal chat); returns the message. */
export async function send(from: TestUser, to: TestUser, content: string, extra: Record<string, unknown> = {}) {
  const res = await from.api.post(`${V2}/messages/send`, { receiver_id: to.id, content, ...extra })
  assert.equal(res.status, 200, res.text)
  return res.body.data
}

/** Up to 100 messages of a chat, newest first. */
export async function history(user: TestUser, chatId: number, query: Record<string, string | number> = {}) {
  const res = await user.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 100, ...query } })
  assert.equal(res.status, 200, res.text)
  return res.body.items as any[]
}

/**
 * A chat's whole history, newest first, page by page up to the answer's `pages`: a page is a
 * window of seqs, so messages deleted for everyone leave it short though more pages follow.
 */
export async function wholeHistory(user: TestUser, chatId: number) {
  const out: any[] = []
  for (let page = 1; ; page++) {
    const res = await user.api.get(`${V2}/chat/history`, { query: { chat_id: chatId, per_page: 100, page } })
    assert.equal(res.status, 200, res.text)
    out.push(...res.body.items)
    if (page >= res.body.pages) return out
  }
}

/** A socket on another session (device) of the user: a fresh login. */
export async function anotherDevice(server: TestServer, user: TestUser): Promise<TestSocket> {
  const login = await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  assert.equal(login.status, 200, login.text)
  return TestSocket.connect(server.url, login.body.data.session_token)
}

/** The user's whole update log and latest seq. */
export async function updates(user: TestUser) {
  const res = await user.api.get(`${V2}/updates`, { query: { since: 0, limit: 1000 } })
  assert.equal(res.status, 200, res.text)
  const { updates: items, seq } = res.body.data as { updates: Update[]; seq: number }
  return { items, seq }
}
