/**
 * A fuzz pass over the Bot API (fast-check): hostile method names, tokens, parameter names and
 * values, content types and raw bodies. Whatever comes in, the answer is Telegram's envelope and
 * never a 5xx, nothing is sent that should not be, and the server is still up at the end.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { history, send } from '../harness/messaging.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'

const RUNS = Number(process.env.FUZZ_RUNS ?? 600)
const server = await startTestServer()
const [owner, user] = [await server.registerUser(), await server.registerUser()]
const registered = await owner.api.post('/api/bots/register', {
  name: 'Fuzz',
  username: `${uniqueName('z').slice(0, 20)}_bot`,
  allowed_commands: ['start'],
})
const bot = registered.body.data as { bot_id: number; token: string }
const first = await send(user, { id: bot.bot_id } as TestUser, 'hello')

const NASTY = [
  '',
  ' ',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '\u0000',
  '\ud800',
  '../../etc/passwd',
  '%2e%2e',
  '<script>',
  "' OR 1=1 --",
  '1e400',
  'NaN',
  '-0',
  '9007199254740993',
  '👍',
  'x'.repeat(5000),
]
const METHOD_NAMES = [
  'getMe',
  'getUpdates',
  'sendMessage',
  'setMyCommands',
  'getMyCommands',
  'deleteWebhook',
  'getWebhookInfo',
  'SENDMESSAGE',
  'setWebhook',
  ...NASTY,
]
const PARAM_NAMES = [
  'chat_id',
  'text',
  'offset',
  'limit',
  'timeout',
  'allowed_updates',
  'reply_markup',
  'reply_parameters',
  'reply_to_message_id',
  'commands',
  'drop_pending_updates',
  '__proto__',
  'constructor',
]

const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...NASTY),
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    2 ** 53,
    user.id,
    -user.id,
    first.message_id,
    4097,
    101,
    51,
    [],
    {},
    [[]],
    { inline_keyboard: [[{ text: 'a' }]] },
    { message_id: 'x' },
  ),
  fc.string({ maxLength: 30 }),
  fc.integer(),
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
)

const request = fc.record({
  method: fc.oneof(fc.constantFrom(...METHOD_NAMES), fc.string({ maxLength: 20 })),
  token: fc.constantFrom('good', 'good', 'good', 'junk', 'other-id'),
  params: fc.dictionary(fc.constantFrom(...PARAM_NAMES), value, { maxKeys: 5 }),
  encoding: fc.constantFrom('json', 'json', 'form', 'multipart', 'query', 'raw'),
  raw: fc.constantFrom('{', '[]', 'null', '"x"', '{"__proto__": {"text": "x"}}', '\u0000', '--x\r\nbroken'),
  contentType: fc.constantFrom(
    'application/json',
    'text/plain',
    'application/xml',
    'multipart/form-data; boundary=x',
    'application/x-www-form-urlencoded',
  ),
})

const asText = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))

test(`fuzz: ${RUNS} Bot API calls answer in Telegram's envelope without a 5xx`, { timeout: 300_000 }, async () => {
  const failures: string[] = []
  await fc.assert(
    fc.asyncProperty(request, async (input) => {
      const token = input.token === 'good' ? bot.token : input.token === 'junk' ? 'junk' : `${user.id}:${bot.token.split(':')[1]}`
      let method: string
      try {
        method = encodeURIComponent(input.method)
      } catch {
        method = '%ED%A0%80'
      }
      let url = `${server.url}/bot${token}/${method}`
      const init: RequestInit & { headers: Record<string, string> } = { method: 'POST', headers: {} }
      const entries = Object.entries(input.params)
      if (input.encoding === 'json') {
        init.headers['content-type'] = 'application/json'
        init.body = JSON.stringify(input.params)
      } else if (input.encoding === 'form') {
        init.headers['content-type'] = 'application/x-www-form-urlencoded'
        init.body = new URLSearchParams(entries.map(([k, v]) => [k, asText(v)])).toString().replace(/%EF%BF%BD/g, '%ED%A0%80')
      } else if (input.encoding === 'multipart') {
        const form = new FormData()
        for (const [k, v] of entries) form.append(k, asText(v))
        init.body = form
      } else if (input.encoding === 'query') {
        url += `?${new URLSearchParams(entries.map(([k, v]) => [k, asText(v)])).toString()}`
        init.method = 'GET'
      } else {
        init.headers['content-type'] = input.contentType
        init.body = input.raw
      }
      // long polls would only slow the run: a timeout is cut short by the server's cap anyway
      if (input.params.timeout !== undefined && /getupdates/i.test(input.method)) return true
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) })
      const text = await res.text()
      let body: any = null
      try {
        body = JSON.parse(text)
      } catch {
        /* reported below */
      }
      const problems: string[] = []
      if (res.status >= 500) problems.push(`status ${res.status}`)
      if (!body || typeof body.ok !== 'boolean') problems.push('not the Telegram envelope')
      else if (!body.ok && (body.error_code !== res.status || typeof body.description !== 'string'))
        problems.push('a failure without error_code/description')
      if (/\n\s+at .+:\d+:\d+/.test(text)) problems.push('a stack trace')
      if (problems.length)
        failures.push(
          `${init.method} ${url.slice(server.url.length, 200)} ${String(init.body ?? '').slice(0, 120)} → ${res.status} ${problems.join(', ')}: ${text.slice(0, 200)}`,
        )
      return true
    }),
    { numRuns: RUNS, seed: 20261125 },
  )
  assert.deepEqual(failures.slice(0, 10), [])
  // still up, and still itself
  const me = await (await fetch(`${server.url}/bot${bot.token}/getMe`)).json()
  assert.equal(me.result.id, bot.bot_id)
  // every message the bot sent is one a valid sendMessage could make: to the user, with text
  for (const message of await history(user, first.chat_id)) {
    if (message.sender_id !== bot.bot_id) continue
    assert.ok(message.content.trim().length > 0 && message.content.length <= 4096)
  }
})
