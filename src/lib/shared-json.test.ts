import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { isShared, share, stringifyShared } from './shared-json.js'

test('a frame embedding a shared message has JSON.stringify’s text, field order included, and the text is made once', () => {
  const message = { message_id: 7, chat_id: 3, content: 'hé "quoted" \u2028', reactions: {}, read_at: null, is_read: false, skipped: undefined }
  share(message)
  assert.ok(isShared(message))
  assert.ok(!isShared({}) && !isShared(null) && !isShared('x'))
  const frames: unknown[] = [
    { type: 'ack', id: 'r-1', data: message },
    { type: 'ack', id: 12, data: message },
    { type: 'message.new', seq: 41, data: { message } },
    { type: 'message.new', chat_id: 3, chat_seq: 9, data: { message } },
    { data: { message, extra: [1, { a: 2 }], when: new Date(0), fn: () => 1 }, type: 'x', missing: undefined },
    message,
  ]
  for (const frame of frames) assert.equal(stringifyShared(frame), JSON.stringify(frame))
  // the text was kept from the first time: a change made after sharing (which callers must not make) does not show
  const before = JSON.stringify(message)
  message.content = 'changed'
  assert.equal(stringifyShared({ type: 'ack', id: 1, data: message }), `{"type":"ack","id":1,"data":${before}}`)
})

test('without shared objects it is JSON.stringify, whatever the value', () => {
  fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
    const value = { type: 'x', data: { a, nested: { b } }, list: [a] }
    assert.equal(stringifyShared(value), JSON.stringify(value))
    assert.equal(stringifyShared(a), JSON.stringify(a))
  }))
})

test('a shared object deeper than the depth walked is stringified as it is (same text)', () => {
  const deep = { z: 1 }
  share(deep)
  const value = { a: { b: { c: deep } } }
  assert.equal(stringifyShared(value, 1), JSON.stringify(value))
  assert.equal(stringifyShared(value, 3), JSON.stringify(value))
})
