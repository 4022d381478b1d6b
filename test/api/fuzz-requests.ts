/**
 * The fuzz passes' requests (fuzz.test.ts, fuzz-db.test.ts): property-based (fast-check) requests
 * for every route, built from each operation's own OpenAPI schema and then bent (wrong types, huge
 * and non-integer numbers, prototype names as keys and values, U+0000, lone surrogates, long
 * strings, junk ids and paths, the wrong content type or none, malformed JSON), with and without a
 * session; and the checks every answer goes through (no 5xx, no stack trace, the error envelope on
 * API paths, no HTML there).
 */
import fc from 'fast-check'
import { createGroup } from '../harness/fixtures.js'
import { upload } from '../harness/files.js'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import type { TestServer } from '../harness/server.js'

/** FUZZ_RUNS when set (the full run), else this file's CI default. */
export function fuzzRuns(ciDefault: number): number {
  const raw = process.env.FUZZ_RUNS
  if (raw === undefined || raw === '') return ciDefault
  const runs = Number(raw)
  if (!Number.isSafeInteger(runs) || runs <= 0) throw new Error(`FUZZ_RUNS must be a positive integer (got ${JSON.stringify(raw)})`)
  return runs
}

export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261124)

export interface Schema {
  type?: string | string[]
  properties?: Record<string, Schema>
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  nullable?: boolean
  format?: string
  minimum?: number
  maximum?: number
}

export interface Operation {
  method: string
  path: string
  params: { name: string; in: string; schema?: Schema }[]
  body?: Schema
}

/** One request ready to go, and how to show it in a failure. */
export interface Prepared {
  op: Operation
  url: string
  path: string
  init: RequestInit
  what: string
  /** a fresh session was signed in for it (a write of its own, before the request) */
  signedIn: boolean
}

export interface Answer {
  status: number
  type: string
  text: string
}

const NASTY_STRINGS = [
  '',
  ' ',
  '__proto__',
  'constructor',
  'prototype',
  'valueOf',
  'toString',
  'hasOwnProperty',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '..',
  '../../etc/passwd',
  '%2e%2e%2f',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '2016-12-31T23:59:60Z',
  '2027-02-30T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '1e400',
  'NaN',
  '-0',
  '👍',
  '🇫🇷',
  'x'.repeat(70_000),
]
const NASTY_NUMBERS = [0, -1, 1.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), Number.MAX_VALUE, 1e-9]
const AUTH = ['none', 'alice', 'admin', 'junk', 'basic'] as const
/** operations that end the session they are called with: they get a throwaway one */
const ENDS_SESSIONS = /\/(logout|sessions\/\{id\}|users\/\{id\}\/(ban|role))$/
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'multipart/form-data',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'application/offset+octet-stream',
  'application/xml',
  null,
]
const RAW_BODIES = [
  '{',
  '{"chat_id": 1e400}',
  '{"__proto__": {"is_admin": 1}}',
  '[]',
  'null',
  '"text"',
  '{"content": "\\u0000"}',
  '\u0000',
  '--x\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc',
]

/** encodeURIComponent, which throws on a lone surrogate: that one goes as a raw, invalid UTF-8 escape */
function encodeAnyway(text: string) {
  try {
    return encodeURIComponent(text)
  } catch {
    return '%ED%A0%80'
  }
}

function isApiPath(path: string) {
  return !(
    path === '/' ||
    path === '/logout' ||
    path === '/verify-email' ||
    path.startsWith('/qr/') ||
    path.startsWith('/docs') ||
    path.startsWith('/files/') ||
    (path.startsWith('/uploads/') &&
      !path.startsWith('/uploads/multipart') &&
      !path.startsWith('/uploads/complete') &&
      !path.startsWith('/uploads/tus'))
  )
}

/**
 * Sets up the state the handlers need to go deep (users, a chat with messages, a group, a channel,
 * a file) on `server`, reads its OpenAPI document, and returns the operations, the arbitraries and
 * the request builder and checker.
 */
export async function fuzzRequests(server: TestServer) {
  const admin = await server.createAdmin()
  const [alice, bob, target] = await registerUsers(server, 3)
  const first = await send(alice, bob, 'hello')
  await send(bob, alice, 'hi back')
  const group = await createGroup(alice, { title: 'Fuzz group' })
  await alice.api.post(`${V2}/groups/add-member`, { chat_id: group.group_id, user_id: bob.id })
  const channel = (await alice.api.post(`${V2}/channels/create`, { title: 'Fuzz channel' })).body.data
  const file = await upload(server, alice, Buffer.from('fuzz file bytes'), 'f.txt')
  const ids = [first.message_id, first.chat_id, group.group_id, channel.channel_id, file.id, alice.id, bob.id, target.id]

  /** Tokens a request may carry; the sessions that fuzzing may end (logout, revoke) are throwaways. */
  const throwaway = async () =>
    (await server.api.post(`${V2}/auth/login`, { login: target.username, password: target.password })).body.data.session_token as string

  const anyString = fc.oneof(
    fc.constantFrom(...NASTY_STRINGS),
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
  )
  const anyInteger = fc.oneof(fc.constantFrom(...ids), fc.integer({ min: -3, max: 60 }), fc.constantFrom(...NASTY_NUMBERS))
  const junk: fc.Arbitrary<unknown> = fc.oneof(
    fc.constantFrom(null, true, false, [], {}, { __proto__: { polluted: 1 } }, { constructor: { prototype: { polluted: 1 } } }),
    anyString,
    anyInteger,
    fc.array(anyString, { maxLength: 3 }),
  )

  /** Values for a JSON schema: mostly of its shape (so handlers go past validation), sometimes not. */
  function arbitraryFor(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
    if (!schema || depth > 4) return junk
    const options: fc.Arbitrary<unknown>[] = []
    if (schema.enum) options.push(fc.constantFrom(...schema.enum))
    if (schema.const !== undefined) options.push(fc.constant(schema.const))
    for (const sub of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) options.push(arbitraryFor(sub, depth + 1))
    const types = [schema.type ?? []].flat()
    if (types.includes('object') || schema.properties) {
      const properties = Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([key, sub]) => [key, arbitraryFor(sub, depth + 1)]),
      )
      options.push(
        fc
          .tuple(
            fc.record(properties, { requiredKeys: [] }),
            fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'extra', 'valueOf'), junk, { maxKeys: 2 }),
          )
          .map(([known, extra]) => ({ ...extra, ...known })),
      )
    }
    if (types.includes('integer') || types.includes('number')) {
      const lo = schema.minimum ?? -3
      const hi = Math.min(schema.maximum ?? 1000, lo + 1000)
      options.push(fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) }), anyInteger)
    }
    if (types.includes('string')) {
      if (schema.format === 'date-time')
        options.push(fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()))
      options.push(anyString, fc.constantFrom(...ids.map(String)), fc.constantFrom(file.path, `${V2}/join/abc`))
    }
    if (types.includes('boolean')) options.push(fc.boolean())
    if (types.includes('array')) options.push(fc.array(arbitraryFor(schema.items, depth + 1), { maxLength: 4 }))
    if (schema.nullable) options.push(fc.constant(null))
    if (options.length === 0) return junk
    return fc.oneof({ weight: 4, arbitrary: fc.oneof(...options) }, { weight: 1, arbitrary: junk })
  }

  const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    paths: Record<
      string,
      Record<string, { parameters?: Operation['params']; requestBody?: { content: Record<string, { schema: Schema }> } }>
    >
  }
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(openapi.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue
      operations.push({
        method: method.toUpperCase(),
        path,
        params: op.parameters ?? [],
        body: op.requestBody?.content['application/json']?.schema,
      })
    }
  }
  // Routes the document leaves out: the gateway over plain HTTP, tus, the V3 mount of a few, the docs.
  for (const path of [
    `${V2}/ws`,
    '/uploads/tus',
    '/uploads/tus/{path}',
    '/api.v3/api/messages/send',
    '/api.v3/api/chat/history',
    '/docs',
    '/openapi.json',
  ]) {
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) operations.push({ method, path, params: [{ name: 'path', in: 'path' }] })
  }

  const request = fc.record({
    auth: fc.constantFrom(...AUTH),
    pathValues: fc.array(
      fc.oneof(
        fc.constantFrom(...ids.map(String)),
        anyString.map(encodeAnyway),
        fc.constantFrom('..%2F..%2Fetc%2Fpasswd', '%00', 'a%2Fb', '1e400', '9007199254740993'),
      ),
      { minLength: 3, maxLength: 3 },
    ),
    query: fc.dictionary(
      fc.constantFrom(
        'page',
        'per_page',
        'chat_id',
        'channel_id',
        'since',
        'limit',
        'q',
        'before_id',
        'after_id',
        'token',
        '__proto__',
        'format',
        'topic_id',
      ),
      fc.oneof(anyString, anyInteger.map(String)),
      { maxKeys: 4 },
    ),
    bodyKind: fc.constantFrom('schema', 'schema', 'schema', 'raw', 'none'),
    raw: fc.constantFrom(...RAW_BODIES),
    contentType: fc.oneof(
      { weight: 6, arbitrary: fc.constant('application/json') },
      { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
    ),
  })
  type RequestInput = typeof request extends fc.Arbitrary<infer T> ? T : never

  /** The request `input` and `body` describe for `op`; a throwaway session is signed in for the operations that end theirs. */
  async function prepare(op: Operation, input: RequestInput, body: unknown): Promise<Prepared> {
    let i = 0
    const path = op.path.replace(/\{[^}]+\}/g, () => input.pathValues[i++ % 3])
    const query = new URLSearchParams(input.query).toString()
    const url = `${server.url}${path}${query ? `?${query}` : ''}`
    const headers: Record<string, string> = {}
    const token =
      input.auth === 'alice' ? alice.token : input.auth === 'admin' ? admin.token : input.auth === 'junk' ? 'x'.repeat(43) : null
    const signedIn = token !== null && ENDS_SESSIONS.test(op.path)
    if (token) headers.authorization = `Bearer ${signedIn ? await throwaway() : token}`
    if (input.auth === 'basic') headers.authorization = 'Basic YWxpY2U6cHc='
    let payload: string | undefined
    if (op.method !== 'GET' && input.bodyKind !== 'none') {
      payload = input.bodyKind === 'raw' ? input.raw : (JSON.stringify(body) ?? 'null')
      if (input.contentType) headers['content-type'] = input.contentType
    }
    if (op.path.startsWith('/uploads/tus')) headers['tus-resumable'] = '1.0.0'
    const what = `${op.method} ${path}${query ? `?${query}` : ''} [${input.auth}, ${headers['content-type'] ?? 'no type'}] ${payload?.slice(0, 200) ?? ''}`
    return { op, url, path, what, signedIn, init: { method: op.method, headers, body: payload, redirect: 'manual' } }
  }

  /** Sends it: the answer, or the reason there was none (a failure in itself). */
  async function deliver(prepared: Prepared): Promise<Answer | string> {
    try {
      const res = await fetch(prepared.url, { ...prepared.init, signal: AbortSignal.timeout(10_000) })
      return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() }
    } catch (error) {
      return `no answer (${(error as Error).message})`
    }
  }

  /** What is wrong with an answer: a 5xx, a stack trace, an API error outside the envelope, HTML on an API path. */
  function problemsOf(prepared: Prepared, { status, type, text }: Answer): string[] {
    const problems: string[] = []
    // the video proxy's documented answer while no video service runs (the harness starts none)
    const videoDown = status === 504 && prepared.op.path === '/video/integration/config' && text.includes('"upstream_timeout"')
    if (status >= 500 && !videoDown) problems.push(`status ${status}`)
    if (/\n\s+at .+:\d+:\d+/.test(text)) problems.push('a stack trace')
    if (isApiPath(prepared.path) && status >= 400) {
      if (!type.includes('application/json')) problems.push(`a ${type || 'typeless'} error`)
      else {
        let parsed: { success?: unknown; error?: { code?: unknown; message?: unknown } } | null = null
        try {
          parsed = JSON.parse(text)
        } catch {
          problems.push('a body labelled JSON that is not')
        }
        if (parsed && (parsed.success !== false || typeof parsed.error?.code !== 'string' || typeof parsed.error?.message !== 'string'))
          problems.push('no error envelope')
      }
    }
    if (isApiPath(prepared.path) && /^\s*<(!doctype|html)/i.test(text)) problems.push('HTML on an API path')
    return problems
  }

  return {
    operations,
    request,
    arbitraryFor,
    prepare,
    deliver,
    problemsOf,
    users: { admin, alice, bob, target },
    fixtures: { first, group, channel, file },
  }
}
