import assert from 'node:assert/strict'
import test from 'node:test'
import { createRequire } from 'node:module'
import type { Writable } from 'node:stream'
import { textFrames } from './text-frames.js'

/** ws's frame parser (exported by ws, not described by @types/ws): what a ws client reads with */
const Receiver = createRequire(import.meta.url)('ws').Receiver as new (options: { isServer: boolean }) => Writable

/** What a WebSocket client reads from `bytes` (ws's own parser, as a client side), message by message. */
function parse(bytes: Buffer, chunk = bytes.length): string[] {
  const got: string[] = []
  const receiver = new Receiver({ isServer: false })
  receiver.on('message', (data: Buffer, isBinary: boolean) => {
    assert.equal(isBinary, false, 'a text frame')
    got.push(data.toString('utf8'))
  })
  receiver.on('error', (err: Error) => assert.fail(err))
  for (let at = 0; at < bytes.length; at += chunk) receiver.write(bytes.subarray(at, at + chunk))
  return got
}

test('every length class of frame reads back as its text: 0–125, 126–65,535 and 65,536 bytes or more', () => {
  const texts = [
    '',
    'a',
    'x'.repeat(125),
    'x'.repeat(126),
    // 42 UTF-16 units that are 126 bytes: short by its units, long by its bytes
    '€'.repeat(42),
    'é'.repeat(63),
    'x'.repeat(65_535),
    'x'.repeat(65_536),
    // few enough units to look short, past 65,535 bytes once encoded
    '€'.repeat(21_846),
    // surrogate pairs: 2 units, 4 bytes
    '😀'.repeat(300),
    JSON.stringify({ type: 'message.new', seq: 7, data: { message: { content: 'привет, 世界 🌍' } } }),
  ]
  assert.deepEqual(parse(textFrames(texts)), texts)
  // the same bytes split into small chunks, as TCP may deliver them
  assert.deepEqual(parse(textFrames(texts), 7), texts)
})

test('the frames are exactly as long as their headers and UTF-8 texts', () => {
  assert.equal(textFrames(['hello']).length, 2 + 5)
  assert.equal(textFrames(['x'.repeat(200)]).length, 4 + 200)
  assert.equal(textFrames(['€'.repeat(100)]).length, 4 + 300)
  assert.equal(textFrames(['x'.repeat(70_000)]).length, 10 + 70_000)
  assert.equal(textFrames([]).length, 0)
  assert.deepEqual([...textFrames(['hi'])], [0x81, 2, 0x68, 0x69], 'FIN, opcode 1, unmasked')
})
