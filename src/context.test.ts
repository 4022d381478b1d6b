import assert from 'node:assert/strict'
import { test } from 'node:test'
import pino from 'pino'
import { LOG_REDACTION } from './context.js'

test('the logger redacts credentials, and a URL keeps all but its token in every spelling', () => {
  const lines: string[] = []
  const log = pino({ redact: LOG_REDACTION }, { write: (line: string) => void lines.push(line) })
  const secret = 'c2VjcmV0LXRva2VuLXZhbHVl'
  log.info({ req: { method: 'GET', url: `/api.v2/api/ws?seq=3&token=${secret}` } }, 'upgrade')
  log.info({ url: `/api.v2/api/ws?%74oken=${secret}` }, 'upgrade')
  log.warn(
    {
      req: { headers: { authorization: `Bearer ${secret}`, cookie: `tern_session=${secret}` } },
      body: { password: secret, token: secret },
    },
    'odd',
  )
  const [first, second, third] = lines.map((line) => JSON.parse(line))
  assert.equal(first.req.url, '/api.v2/api/ws?seq=3&token=[redacted]')
  assert.equal(first.req.method, 'GET')
  assert.equal(second.url, '/api.v2/api/ws?[redacted]')
  assert.equal(third.req.headers.authorization, '[redacted]')
  assert.equal(third.body.password, '[redacted]')
  for (const line of lines) assert.ok(!line.includes(secret), line)
  // control: a URL without a credential, and one that is not a string, are logged as they are
  log.info({ req: { url: '/api.v2/api/chat/history?chat_id=5' }, url: 7 }, 'plain')
  const plain = JSON.parse(lines[3])
  assert.equal(plain.req.url, '/api.v2/api/chat/history?chat_id=5')
  assert.equal(plain.url, 7)
})
