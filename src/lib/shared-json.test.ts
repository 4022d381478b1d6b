import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { isShared, shapeJson, share, stringifyShared } from './shared-json.js'

test('a frame embedding a shared message has JSON.stringify’s text, field order included, and the text is made once', () => {
  const message = {
    message_id: 7,
    chat_id: 3,
    content: 'hé "quoted" \u2028',
    reactions: {},
    read_at: null,
    is_read: false,
    skipped: undefined,
  }
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
  for (const value of [-0, 1.5e300, Number.NaN, Number.POSITIVE_INFINITY, true, false, null, 'é\u2028"', { 'k"ey\n': 1, '': 2, ü: [] }]) {
    const frame = { type: 't', value, data: { message, value } }
    assert.equal(stringifyShared(frame), JSON.stringify(frame))
    assert.equal(stringifyShared(value), JSON.stringify(value))
  }
  assert.throws(() => stringifyShared({ data: { message, big: 1n } }), TypeError)
})

test('without shared objects it is JSON.stringify, whatever the value', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
      const value = { type: 'x', data: { a, nested: { b } }, list: [a] }
      assert.equal(stringifyShared(value), JSON.stringify(value))
      assert.equal(stringifyShared(a), JSON.stringify(a))
    }),
  )
})

test('a shared object deeper than the depth walked is stringified as it is (same text)', () => {
  const deep = { z: 1 }
  share(deep)
  const value = { a: { b: { c: deep } } }
  assert.equal(stringifyShared(value, 1), JSON.stringify(value))
  assert.equal(stringifyShared(value, 3), JSON.stringify(value))
})

test('shapeJson writes what JSON.stringify writes, for any values in the shape and anything else', () => {
  type Shape = { a: unknown; b: unknown; c: unknown; d: unknown }
  const json = shapeJson<Shape>(['a', 'b', 'c', 'd'])
  const value = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.double(),
    fc.integer(),
    fc.constantFrom(
      -0,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      '',
      'plain',
      'a "quote"',
      'back\\slash',
      '\u0000\u001f\u007f',
      '\ud83d\ude00 paired',
      'lone \ud800',
      'lone \udfff end',
      'line\u2028sep',
    ),
    fc.string({ unit: 'binary' }),
    fc.jsonValue(),
  )
  fc.assert(
    fc.property(value, value, value, value, (a, b, c, d) => {
      const shaped = { a, b, c, d }
      assert.equal(json(shaped), JSON.stringify(shaped))
    }),
    { numRuns: 2000 },
  )
  // the skeletons (one per set of null fields) are reused: the same text for the same values
  const twice = { a: null, b: 'x', c: null, d: 1 }
  assert.equal(json(twice), '{"a":null,"b":"x","c":null,"d":1}')
  assert.equal(json({ ...twice, d: 2 }), '{"a":null,"b":"x","c":null,"d":2}')
  assert.equal(json({ a: 1, b: 2, c: 3, d: 4 }), '{"a":1,"b":2,"c":3,"d":4}')
  assert.equal(json({ a: null, b: null, c: null, d: null }), '{"a":null,"b":null,"c":null,"d":null}')
  // values JSON.stringify leaves out with their key, or refuses; another size of object; toJSON
  for (const odd of [
    { a: undefined, b: 1, c: 2, d: 3 },
    { a: 1, b: () => 2, c: 3, d: Symbol('s') },
    { a: 1, b: 2, c: 3 },
    { a: 1, b: 2, c: 3, d: 4, e: 5 },
    { a: new Date(0), b: { toJSON: () => undefined }, c: [undefined, () => 1], d: { nested: 'é' } },
  ])
    assert.equal(json(odd as unknown as Shape), JSON.stringify(odd))
  assert.throws(() => json({ a: 1, b: 2n, c: 3, d: 4 }), TypeError)
  assert.equal(shapeJson<object>([])({}), '{}')
})

test('a shared object with its shape serializer: the frames embed that text, made once', () => {
  type Shape = { id: number; text: string }
  let calls = 0
  const json = shapeJson<Shape>(['id', 'text'])
  const message: Shape = { id: 1, text: 'hi "there"' }
  share(message, (value) => {
    calls++
    return json(value)
  })
  for (const frame of [
    { type: 'ack', id: 2, data: message },
    { type: 'message.new', data: { message } },
  ]) {
    assert.equal(stringifyShared(frame), JSON.stringify(frame))
  }
  assert.equal(calls, 1)
})

test('shapeJson past its kept skeletons, and past 52 fields: still JSON.stringify’s text', () => {
  const fields = Array.from({ length: 12 }, (_, i) => `f${i}`)
  const json = shapeJson<Record<string, unknown>>(fields)
  // 4,096 sets of null fields, past the 1,024 kept
  for (let mask = 0; mask < 4096; mask++) {
    const value = Object.fromEntries(fields.map((field, i) => [field, mask & (1 << i) ? null : i]))
    assert.equal(json(value), JSON.stringify(value))
  }
  const wide = Array.from({ length: 60 }, (_, i) => `w${i}`)
  const value = Object.fromEntries(wide.map((field, i) => [field, i % 3 === 0 ? null : 'x']))
  assert.equal(shapeJson<Record<string, unknown>>(wide)(value), JSON.stringify(value))
})
