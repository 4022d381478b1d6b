/**
 * A fuzz pass over every route (property-based, fast-check): requests built from each operation's
 * own schema, then bent (wrong types, huge and non-integer numbers, prototype names as keys and
 * values, U+0000, lone surrogates, long strings, junk ids and paths, the wrong content type or none,
 * malformed JSON), with and without a session. Whatever comes in, the answer is never a 5xx, an API
 * error is always the JSON envelope, and the server is still up at the end.
 *
 * FUZZ_SEED picks another sequence (the seed is printed); FUZZ_RUNS the number of requests.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { createGroup } from '../harness/fixtures.js'
import { upload } from '../harness/files.js'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'

const SEED = Number(process.env.FUZZ_SEED ?? 20261124)
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000)
console.log(`# fuzz: seed ${SEED}, ${RUNS} requests (FUZZ_SEED, FUZZ_RUNS)`)

const server = await startTestServer({ env: { WS_MAX_SOCKETS_PER_USER: '5' } })
const admin = await server.createAdmin()
const [alice, bob, target] = await registerUsers(server, 3)

// State for the handlers to go deep: a chat with messages, a group, a channel, a file, a pending message.
const first = await send(alice, bob, 'hello')
await send(bob, alice, 'hi back')
const group = await createGroup(alice, { title: 'Fuzz group' })
await alice.api.post(`${V2}/groups/add-member`, { chat_id: group.group_id, user_id: bob.id })
const channel = (await alice.api.post(`${V2}/channels/create`, { title: 'Fuzz channel' })).body.data
const file = await upload(server, alice, Buffer.from('fuzz file bytes'), 'f.txt')
const ids = [first.message_id, first.chat_id, group.group_id, channel.channel_id, file.id, alice.id, bob.id, target.id]

/** Tokens a request may carry; the sessions that fuzzing may end (logout, revoke) are throwaways. */
const throwaway = async () => (await server.api.post(`${V2}/auth/login`, { login: target.username, password: target.password })).body.data.session_token as string
const AUTH = ['none', 'alice', 'admin', 'junk', 'basic'] as const
const ENDS_SESSIONS = /\/(logout|sessions\/\{id\}|users\/\{id\}\/(ban|role))$/

// ---------------------------------------------------------------- values

const NASTY_STRINGS = ['', ' ', '__proto__', 'constructor', 'prototype', 'valueOf', 'toString', 'hasOwnProperty', '\u0000', 'a\u0000b', '\ud800', 'x\udfff', '..', '../../etc/passwd', '%2e%2e%2f', '<script>alert(1)</script>', "' OR 1=1 --", '2016-12-31T23:59:60Z', '2027-02-30T00:00:00Z', '9999-12-31T23:59:59Z', '1e400', 'NaN', '-0', '👍', '🇫🇷', 'x'.repeat(70_000)]
const NASTY_NUMBERS = [0, -1, 1.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), Number.MAX_VALUE, 1e-9]

const anyString = fc.oneof(fc.constantFrom(...NASTY_STRINGS), fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }))
const anyInteger = fc.oneof(fc.constantFrom(...ids), fc.integer({ min: -3, max: 60 }), fc.constantFrom(...NASTY_NUMBERS))
const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, [], {}, { __proto__: { polluted: 1 } }, { constructor: { prototype: { polluted: 1 } } }),
  anyString,
  anyInteger,
  fc.array(anyString, { maxLength: 3 }),
)

interface Schema {
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

/** Values for a JSON schema: mostly of its shape (so handlers go past validation), sometimes not. */
function arbitraryFor(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return junk
  const options: fc.Arbitrary<unknown>[] = []
  if (schema.enum) options.push(fc.constantFrom(...schema.enum))
  if (schema.const !== undefined) options.push(fc.constant(schema.const))
  for (const sub of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) options.push(arbitraryFor(sub, depth + 1))
  const types = [schema.type ?? []].flat()
  if (types.includes('object') || schema.properties) {
    const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, sub]) => [key, arbitraryFor(sub, depth + 1)]))
    options.push(fc.tuple(fc.record(properties, { requiredKeys: [] }), fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'extra', 'valueOf'), junk, { maxKeys: 2 }))
      .map(([known, extra]) => ({ ...extra, ...known })))
  }
  if (types.includes('integer') || types.includes('number')) {
    const lo = schema.minimum ?? -3
    const hi = Math.min(schema.maximum ?? 1000, lo + 1000)
    options.push(fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) }), anyInteger)
  }
  if (types.includes('string')) {
    if (schema.format === 'date-time') options.push(fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()))
    options.push(anyString, fc.constantFrom(...ids.map(String)), fc.constantFrom(file.path, `${V2}/join/abc`))
  }
  if (types.includes('boolean')) options.push(fc.boolean())
  if (types.includes('array')) options.push(fc.array(arbitraryFor(schema.items, depth + 1), { maxLength: 4 }))
  if (schema.nullable) options.push(fc.constant(null))
  if (options.length === 0) return junk
  return fc.oneof({ weight: 4, arbitrary: fc.oneof(...options) }, { weight: 1, arbitrary: junk })
}

// ---------------------------------------------------------------- operations

interface Operation {
  method: string
  path: string
  params: { name: string; in: string; schema?: Schema }[]
  body?: Schema
}

const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
  paths: Record<string, Record<string, { parameters?: Operation['params']; requestBody?: { content: Record<string, { schema: Schema }> } }>>
}
const operations: Operation[] = []
for (const [path, item] of Object.entries(openapi.paths)) {
  for (const [method, op] of Object.entries(item)) {
    if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue
    operations.push({ method: method.toUpperCase(), path, params: op.parameters ?? [], body: op.requestBody?.content['application/json']?.schema })
  }
}
// Routes the document leaves out: the gateway over plain HTTP, tus, the V3 mount of a few, the docs.
for (const path of [`${V2}/ws`, '/uploads/tus', '/uploads/tus/{path}', '/api.v3/api/messages/send', '/api.v3/api/chat/history', '/docs', '/openapi.json']) {
  for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) operations.push({ method, path, params: [{ name: 'path', in: 'path' }] })
}

/** encodeURIComponent, which throws on a lone surrogate: that one goes as a raw, invalid UTF-8 escape */
function encodeAnyway(text: string) {
  try {
    return encodeURIComponent(text)
  } catch {
    return '%ED%A0%80'
  }
}

const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'multipart/form-data', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/offset+octet-stream', 'application/xml', null]
const RAW_BODIES = ['{', '{"chat_id": 1e400}', '{"__proto__": {"is_admin": 1}}', '[]', 'null', '"text"', '{"content": "\\u0000"}', '\u0000', '--x\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc']

const request = fc.record({
  auth: fc.constantFrom(...AUTH),
  pathValues: fc.array(fc.oneof(fc.constantFrom(...ids.map(String)), anyString.map(encodeAnyway), fc.constantFrom('..%2F..%2Fetc%2Fpasswd', '%00', 'a%2Fb', '1e400', '9007199254740993')), { minLength: 3, maxLength: 3 }),
  query: fc.dictionary(fc.constantFrom('page', 'per_page', 'chat_id', 'channel_id', 'since', 'limit', 'q', 'before_id', 'after_id', 'token', '__proto__', 'format', 'topic_id'), fc.oneof(anyString, anyInteger.map(String)), { maxKeys: 4 }),
  bodyKind: fc.constantFrom('schema', 'schema', 'schema', 'raw', 'none'),
  raw: fc.constantFrom(...RAW_BODIES),
  contentType: fc.oneof({ weight: 6, arbitrary: fc.constant('application/json') }, { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) }),
})

type RequestInput = typeof request extends fc.Arbitrary<infer T> ? T : never

function isApiPath(path: string) {
  return !(path === '/' || path === '/logout' || path === '/verify-email' || path.startsWith('/qr/') || path.startsWith('/docs') || path.startsWith('/files/') || (path.startsWith('/uploads/') && !path.startsWith('/uploads/multipart') && !path.startsWith('/uploads/complete') && !path.startsWith('/uploads/tus')))
}

const failures: string[] = []
let sent = 0

async function fire(op: Operation, input: RequestInput, body: unknown) {
  let i = 0
  const path = op.path.replace(/\{[^}]+\}/g, () => input.pathValues[i++ % 3])
  const query = new URLSearchParams(input.query).toString()
  const url = `${server.url}${path}${query ? `?${query}` : ''}`
  const headers: Record<string, string> = {}
  const token = input.auth === 'alice' ? alice.token : input.auth === 'admin' ? admin.token : input.auth === 'junk' ? 'x'.repeat(43) : null
  if (token) headers.authorization = `Bearer ${ENDS_SESSIONS.test(op.path) ? await throwaway() : token}`
  if (input.auth === 'basic') headers.authorization = 'Basic YWxpY2U6cHc='
  let payload: string | undefined
  if (op.method !== 'GET' && input.bodyKind !== 'none') {
    payload = input.bodyKind === 'raw' ? input.raw : JSON.stringify(body) ?? 'null'
    if (input.contentType) headers['content-type'] = input.contentType
  }
  if (op.path.startsWith('/uploads/tus')) headers['tus-resumable'] = '1.0.0'
  const what = `${op.method} ${path}${query ? `?${query}` : ''} [${input.auth}, ${headers['content-type'] ?? 'no type'}] ${payload?.slice(0, 200) ?? ''}`
  sent++
  let res: Response
  try {
    res = await fetch(url, { method: op.method, headers, body: payload, redirect: 'manual', signal: AbortSignal.timeout(10_000) })
  } catch (error) {
    failures.push(`${what}: no answer (${(error as Error).message})`)
    return false
  }
  const text = await res.text()
  const type = res.headers.get('content-type') ?? ''
  const problems: string[] = []
  // the video proxy's documented answer while no video service runs (the harness starts none)
  const videoDown = res.status === 504 && op.path === '/video/integration/config' && text.includes('"upstream_timeout"')
  if (res.status >= 500 && !videoDown) problems.push(`status ${res.status}`)
  if (/\n\s+at .+:\d+:\d+/.test(text)) problems.push('a stack trace')
  if (isApiPath(path) && res.status >= 400) {
    if (!type.includes('application/json')) problems.push(`a ${type || 'typeless'} error`)
    else {
      let parsed: { success?: unknown; error?: { code?: unknown; message?: unknown } } | null = null
      try {
        parsed = JSON.parse(text)
      } catch {
        problems.push('a body labelled JSON that is not')
      }
      if (parsed && (parsed.success !== false || typeof parsed.error?.code !== 'string' || typeof parsed.error?.message !== 'string')) problems.push('no error envelope')
    }
  }
  if (isApiPath(path) && /^\s*<(!doctype|html)/i.test(text)) problems.push('HTML on an API path')
  if (problems.length) failures.push(`${what} → ${res.status}: ${problems.join(', ')}: ${text.slice(0, 300)}`)
  return problems.length === 0
}

test(`fuzz: ${RUNS} requests over every route answer without a 5xx, and API errors in the envelope`, { timeout: Math.max(600_000, RUNS * 20) }, async () => {
  const perOperation = Math.ceil(RUNS / operations.length)
  const started = Date.now()
  for (const [index, op] of operations.entries()) {
    const property = fc.asyncProperty(request, arbitraryFor(op.body), async (input, body) => fire(op, input, body))
    // a failing operation is recorded and the pass goes on: one report lists every kind of failure
    const details = await fc.check(property, { numRuns: perOperation, seed: SEED + index, endOnFailure: true })
    if (details.errorInstance) failures.push(`${op.method} ${op.path}: the fuzzer itself failed: ${String(details.errorInstance)}`)
  }
  console.log(`# fuzz: ${sent} requests over ${operations.length} operations in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  assert.deepEqual(failures.slice(0, 20), [], `${failures.length} bad answers`)
  assert.equal((await fetch(`${server.url}/health`)).status, 200, 'the server is still up')
  assert.ok(sent >= RUNS, `${sent} requests sent`)
})
