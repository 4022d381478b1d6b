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

test('a copy of a shared object is not shared, and a frozen object is stringified as it is', () => {
  const message = { message_id: 8, is_read: false }
  share(message)
  assert.equal(stringifyShared({ type: 'ack', id: 1, data: message }), '{"type":"ack","id":1,"data":{"message_id":8,"is_read":false}}')
  // a variant built by spreading the shared object: its own text, not the original's
  const copy = { ...message, is_read: true }
  assert.ok(!isShared(copy))
  assert.equal(stringifyShared({ type: 'ack', id: 1, data: copy }), '{"type":"ack","id":1,"data":{"message_id":8,"is_read":true}}')
  assert.equal(JSON.stringify(message), '{"message_id":8,"is_read":false}')
  assert.deepEqual(Object.keys(message), ['message_id', 'is_read'])
  const frozen = Object.freeze({ message_id: 9 })
  share(frozen)
  assert.ok(!isShared(frozen))
  assert.equal(stringifyShared({ data: { message: frozen } }), '{"data":{"message":{"message_id":9}}}')
})

test('primitives and keys as JSON.stringify writes them', () => {
  const message = { a: 1 }
  share(message)
  for (const value of [-0, 1.5e300, Number.NaN, Number.POSITIVE_INFINITY, true, false, null, 'é\u2028"', { 'k"ey\n': 1, '': 2, 'ü': [] }]) {
    const frame = { type: 't', value, data: { message, value } }
    assert.equal(stringifyShared(frame), JSON.stringify(frame))
    assert.equal(stringifyShared(value), JSON.stringify(value))
  }
  assert.throws(() => stringifyShared({ data: { message, big: 1n } }), TypeError)
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
