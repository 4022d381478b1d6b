/**
 * The assertions every test file shares: an error answer is exactly the envelope, with this
 * status and code, and nothing else (no data, no HTML page, no stack trace, no source path).
 */
import assert from 'node:assert/strict'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '../..')

/** What a request helper returns: the status and parsed body, and the headers and raw text where it has them. */
export interface Answer {
  status: number
  body: any
  /** fetch's Headers, or node:http's header object */
  headers?: Headers | Record<string, string | string[] | undefined>
  text?: string
}

/** A refusal: `status`, `{success: false, error: {code, message}}` and nothing more. `what` names the case in a failure. */
export function assertError(res: Answer, status: number, code: string, what = '') {
  const shown = `${what ? `${what}: ` : ''}${res.text ?? JSON.stringify(res.body)}`
  assert.equal(res.status, status, shown)
  const type =
    res.headers === undefined
      ? undefined
      : res.headers instanceof Headers
        ? res.headers.get('content-type')
        : String(res.headers['content-type'] ?? '')
  if (res.headers) assert.match(type ?? '', /^application\/json/, `${what}: JSON, not ${type}`)
  assert.ok(res.body !== null && typeof res.body === 'object', `${what}: a JSON body: ${shown}`)
  assert.deepEqual(Object.keys(res.body).sort(), ['error', 'success'], shown)
  assert.equal(res.body.success, false, shown)
  assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message'], shown)
  assert.equal(res.body.error.code, code, shown)
  assert.equal(typeof res.body.error.message, 'string', shown)
  assert.ok(res.body.error.message.length > 0, `${what}: a message`)
  assertNoLeak(res.text ?? JSON.stringify(res.body), what)
}

/** No stack trace, source path, dependency path or checkout path in an answer. */
export function assertNoLeak(text: string, what = '') {
  assert.ok(!/<html|<!doctype/i.test(text), `${what}: never an HTML error page`)
  assert.doesNotMatch(text, /\bat [\w.<>]+ \(|\n\s+at /, `${what}: no stack trace lines`)
  assert.ok(!text.includes('/src/'), `${what}: no source paths`)
  assert.ok(!text.includes('node_modules'), `${what}: no dependency paths`)
  assert.ok(!text.includes(root), `${what}: no absolute paths of the checkout`)
  assert.ok(!/"stack"/.test(text), `${what}: no stack field`)
}
