import assert from 'node:assert/strict'
import { test } from 'node:test'
import pino from 'pino'
import { accessWriter, loggedUrl, requestLogging, type AccessFields } from './request-log.js'

/** A pino logger writing into an array, with Tern's redaction, at `level`. */
function captured(level = 'info') {
  const lines: string[] = []
  const stream = { write: (line: string) => void lines.push(line) }
  const logger = pino({ level, redact: { paths: ['*.token'], censor: '[redacted]' } }, stream)
  return { logger, lines }
}

const fields: AccessFields = {
  reqId: 'req-7',
  method: 'GET',
  url: '/api.v2/api/ws?a=1&token=secret-token&b="quoted"\\',
  ip: '127.0.0.1',
  statusCode: 200,
  responseTime: 1.2345678901234,
}

test('the access line is byte for byte the line pino writes for the same fields', () => {
  const ours = captured()
  const theirs = captured()
  const child = ours.logger.child({ service: 'tern' })
  const theirChild = theirs.logger.child({ service: 'tern' })
  const now = Date.now
  Date.now = () => 1_795_000_000_000
  try {
    accessWriter(child)(fields)
    theirChild.info(
      {
        reqId: fields.reqId,
        req: { method: fields.method, url: '/api.v2/api/ws?a=1&token=[redacted]&b="quoted"\\', ip: fields.ip },
        res: { statusCode: fields.statusCode },
        responseTime: fields.responseTime,
      },
      'request completed',
    )
  } finally {
    Date.now = now
  }
  assert.equal(ours.lines.length, 1)
  assert.equal(ours.lines[0], theirs.lines[0])
  const line = JSON.parse(ours.lines[0])
  assert.equal(line.service, 'tern')
  assert.equal(line.req.url, '/api.v2/api/ws?a=1&token=[redacted]&b="quoted"\\')
  assert.ok(!ours.lines[0].includes('secret-token'))
})

test('a destination that needs pino metadata (multistream) gets the line through pino', () => {
  const lines: string[] = []
  const logger = pino({ level: 'info' }, pino.multistream([{ stream: { write: (line: string) => void lines.push(line) } }]))
  accessWriter(logger)({ ...fields, url: '/health?token=abc' })
  assert.equal(lines.length, 1)
  const line = JSON.parse(lines[0])
  assert.equal(line.msg, 'request completed')
  assert.equal(line.req.url, '/health?token=[redacted]')
  assert.equal(line.res.statusCode, 200)
})

test('a request logger becomes a pino child only when used, and then carries the request id', () => {
  const { logger, lines } = captured('debug')
  const { childLoggerFactory } = requestLogging(logger)
  let children = 0
  const counting = Object.create(logger, {
    child: {
      value: (...args: Parameters<typeof logger.child>) => {
        children++
        return logger.child(...args)
      },
    },
  })
  // Fastify types the factory's result as its base logger; the lazy child also has pino's isLevelEnabled
  const child = (...args: Parameters<typeof childLoggerFactory>) => childLoggerFactory(...args) as unknown as pino.Logger
  const unused = child(counting, { reqId: 'req-1' }, {})
  assert.equal(unused.level, 'debug')
  assert.equal(unused.isLevelEnabled('debug'), true)
  assert.equal(unused.isLevelEnabled('trace'), false)
  assert.equal(children, 0)

  const used = child(counting, { reqId: 'req-2' }, {})
  used.warn({ key: 'k' }, 'stored object is missing')
  used.debug('details')
  assert.equal(children, 1, 'one child, made on first use')
  assert.deepEqual(
    lines.map((l) => [JSON.parse(l).reqId, JSON.parse(l).msg]),
    [
      ['req-2', 'stored object is missing'],
      ['req-2', 'details'],
    ],
  )

  const quiet = child(counting, { reqId: 'req-3' }, { level: 'error' })
  assert.equal(quiet.level, 'error')
  assert.equal(quiet.isLevelEnabled('info'), false)
  quiet.info('not written')
  assert.equal(lines.length, 2)
})

test('a token in the URL is masked in every spelling the server could be handed it', () => {
  const secret = 'c2VjcmV0LXRva2VuLXZhbHVl'
  for (const url of [
    `/api.v2/api/ws?token=${secret}`,
    `/api.v2/api/ws?x=1&token=${secret}`,
    `/api.v2/api/ws?x=1;token=${secret}`,
    `/api.v2/api/ws?x=1;TOKEN=${secret}&y=2`,
    `/api.v2/api/ws?x=1%26token%3D${secret}`,
    `/api.v2/api/ws?access_token=${secret}#frag`,
    `/api.v2/api/ws?session_token=${secret}`,
    // names spelled with escapes, which the query parser decodes to `token` (the gateway accepts them)
    `/api.v2/api/ws?%74oken=${secret}`,
    `/api.v2/api/ws?x=1&to%6Ben=${secret}&seq=4`,
    `/api.v2/api/ws?TO%4B%45N=${secret}`,
    `/api.v2/api/ws?token=&%74oken=${secret}`,
    `/api.v2/api/ws?%2574oken=${secret}`,
    `/api.v2/api/ws?token%253D${secret}`,
  ]) {
    const logged = loggedUrl(url)
    assert.ok(!logged.includes(secret), logged)
    assert.ok(logged.includes('[redacted]'), logged)
    assert.ok(logged.startsWith('/api.v2/api/ws'), logged)
  }
  // the query parser keeps `;` and `#` in a value: no piece of the token stays behind them
  assert.equal(loggedUrl(`/api.v2/api/ws?token=${secret};tail#end&seq=3`), '/api.v2/api/ws?token=[redacted]&seq=3')
  // the plain spellings keep the rest of the query readable
  assert.equal(loggedUrl(`/api.v2/api/ws?seq=3&token=${secret}`), '/api.v2/api/ws?seq=3&token=[redacted]')
  // control: a URL without a credential is logged as it is, escapes and all
  assert.equal(loggedUrl('/api.v2/api/chat/history?chat_id=5&page=2'), '/api.v2/api/chat/history?chat_id=5&page=2')
  assert.equal(loggedUrl('/api.v2/api/users/search?q=%D0%B0%20b'), '/api.v2/api/users/search?q=%D0%B0%20b')
})

test('a Bot API URL is logged without the token in its path', () => {
  const token = '123456:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQrrSSttUUv'
  assert.equal(loggedUrl(`/bot${token}/getUpdates?offset=5&timeout=30`), '/bot[redacted]/getUpdates?offset=5&timeout=30')
  assert.equal(loggedUrl(`//bot${token}/sendMessage`), '/bot[redacted]/sendMessage')
  assert.equal(loggedUrl(`/bot${token}`), '/bot[redacted]')
  assert.equal(loggedUrl(`/bot${encodeURIComponent(token)}/getMe`), '/bot[redacted]/getMe')
  // control: Tern's own bot routes have no token in the path
  assert.equal(loggedUrl('/api/bots/5/command'), '/api/bots/5/command')
})
