/**
 * A fuzz pass over the WebSocket gateway (property-based, fast-check): malformed frames — invalid
 * JSON, JSON that is not an object, wrong types in known frames, unknown and prototype-named types,
 * boundary and non-integer numbers, huge strings, deep nesting, binary frames, text frames of
 * invalid UTF-8, requests (send, edit…) with bent ids and data — sent on a live socket. After each, a `ping` and a marker frame: everything the
 * server answered in between must be a frame of the documented shapes (realtime/protocol.ts: error,
 * reset, pong, and the user's own events when a resume was valid), and the pong must come (the
 * socket still answers a valid frame: the positive control). The only closes allowed are the
 * documented protocol ones for what was sent: 1009 for a frame over the 64 KiB cap and 1007 for a
 * text frame that is not UTF-8 (RFC 6455); the pass then goes on on a fresh socket. Meanwhile
 * another user's socket and a second socket of the fuzzing user stay open, receive no error, and
 * still get a message at the end; the process never crashes (the server runs in it).
 *
 * FUZZ_RUNS sets the number of frames (CI: 3,000), FUZZ_SEED the sequence.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Ajv } from 'ajv'
import fc from 'fast-check'
import { RawSocket } from '../harness/raw-socket.js'
import { SERVER_FRAMES } from '../../src/realtime/protocol.js'
import { createGroup } from '../harness/fixtures.js'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'
import { FUZZ_SEED, fuzzRuns } from '../api/fuzz-requests.js'

const RUNS = fuzzRuns(3_000)
console.log(`# fuzz-frames: seed ${FUZZ_SEED}, ${RUNS} frames (FUZZ_SEED, FUZZ_RUNS)`)

const server = await startTestServer()
const [alice, bob, carol] = await registerUsers(server, 3)
// alice's log holds events a resume may replay: messages in a personal chat and a group
await send(carol, alice, 'before the fuzz')
const aliceMessage = await send(alice, carol, 'and back')
const group = await createGroup(carol, { title: 'Frames group' })
await carol.api.post(`${V2}/groups/add-member`, { chat_id: group.group_id, user_id: alice.id })
await carol.api.post(`${V2}/messages/send`, { chat_id: group.group_id, content: 'in the group' })

const ajv = new Ajv({ strict: false })
const controlFrames = new Map(Object.entries(SERVER_FRAMES).map(([type, doc]) => [type, ajv.compile(doc.frame)]))

/** the gateway's payload cap (realtime/gateway.ts): a frame over it is closed with 1009 */
const MAX_PAYLOAD = 64 * 1024

// ---------------------------------------------------------------- frames

interface Outgoing {
  bytes: Buffer
  binary: boolean
  /** what it is, for a failure report */
  label: string
}

const text = (value: string, label = 'text'): Outgoing => ({ bytes: Buffer.from(value, 'utf8'), binary: false, label })
const json = (value: unknown, label = 'json'): Outgoing => text(JSON.stringify(value) ?? 'null', label)

const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'valueOf',
  'toString',
  'hasOwnProperty',
  'isPrototypeOf',
  '__defineGetter__',
  '',
]
const BOUNDARY_NUMBERS = [
  0,
  -0,
  -1,
  1,
  0.5,
  1.5,
  -1.5,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  1e-9,
  1e308,
]
const RAW_NUMBERS = ['1e400', '-1e400', '1e-400', '9007199254740993', '00', '-0', '0x10', '1.', '.5', 'NaN', 'Infinity']

const anyString = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.constantFrom(...PROTOTYPE_NAMES, 'resume', 'ping', 'RESUME', ' ping', 'ping\u0000', '\ud800', 'message.new', 'pong', 'error'),
)
const anyNumber = fc.oneof(fc.constantFrom(...BOUNDARY_NUMBERS), fc.integer(), fc.double())
const scalar: fc.Arbitrary<unknown> = fc.oneof(anyString, anyNumber, fc.constantFrom(null, true, false))
const junk: fc.Arbitrary<unknown> = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 3 }),
  fc.dictionary(anyString, scalar, { maxKeys: 3 }),
  fc.constantFrom({}, [], { __proto__: { seq: 1 } }),
)
/** chat positions as resume takes them, bent: junk ids, boundary seqs, prototype keys */
const chats = fc.oneof(
  fc.dictionary(
    fc.oneof(fc.constantFrom(String(group.group_id), '1', '0', '-1', '01', '1.5', '9007199254740993', ...PROTOTYPE_NAMES), anyString),
    fc.oneof(anyNumber, junk),
    { maxKeys: 4 },
  ),
  junk,
)

const structured: fc.Arbitrary<Outgoing> = fc.oneof(
  // a valid resume: from the start (a replay of alice's events), from the middle, or beyond the log (a reset)
  fc
    .record(
      {
        type: fc.constant('resume'),
        seq: fc.constantFrom(0, 1, 2, 3, 2 ** 31, 2 ** 53 - 1),
        chats: fc.constantFrom({}, { [group.group_id]: 0 }, { [group.group_id]: 1 }, { [group.group_id]: 2 ** 53 - 1 }),
      },
      { requiredKeys: ['type', 'seq'] },
    )
    .map((frame) => json(frame, 'valid resume')),
  // a resume: valid, or with junk seq / chats
  fc
    .record({ type: fc.constant('resume'), seq: fc.oneof(anyNumber, junk), chats }, { requiredKeys: ['type'] })
    .map((frame) => json(frame, 'resume')),
  // ping with extras, and a type that is not a string
  fc
    .record({ type: fc.oneof(fc.constant('ping'), junk), data: junk, seq: junk }, { requiredKeys: ['type'] })
    .map((frame) => json(frame, 'typed')),
  // unknown and prototype-named types
  fc.record({ type: anyString, extra: junk }, { requiredKeys: ['type'] }).map((frame) => json(frame, 'unknown type')),
  // requests (send, edit, delete, react, read) with bent ids and data, some of them valid
  fc
    .record(
      {
        type: fc.constantFrom('send', 'edit', 'delete', 'react', 'read'),
        id: fc.oneof(fc.string({ maxLength: 140 }), anyNumber, junk),
        data: fc.oneof(
          junk,
          fc.record(
            {
              chat_id: fc.oneof(fc.constantFrom(group.group_id), anyNumber, junk),
              receiver_id: fc.oneof(fc.constantFrom(bob.id, carol.id, alice.id), anyNumber, junk),
              message_id: fc.oneof(fc.constantFrom(aliceMessage.message_id), anyNumber, junk),
              content: fc.oneof(anyString, junk),
              emoji: fc.oneof(fc.constantFrom('👍', null), anyString),
              for_all: fc.oneof(fc.boolean(), junk),
              client_message_id: fc.oneof(anyString, junk),
              reply_to_id: fc.oneof(anyNumber, junk),
            },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: ['type'] },
    )
    .map((frame) => json(frame, `request ${frame.type}`)),
  // JSON that is not an object
  junk.map((value) => json(value, 'not an object')),
  // boundary numbers written as JSON text JavaScript would not produce
  fc
    .tuple(fc.constantFrom(...RAW_NUMBERS), fc.constantFrom(...RAW_NUMBERS))
    .map(([seq, at]) => text(`{"type":"resume","seq":${seq},"chats":{"${group.group_id}":${at}}}`, 'raw numbers')),
)

const malformed: fc.Arbitrary<Outgoing> = fc.oneof(
  // invalid JSON
  fc
    .constantFrom(
      '{',
      '}',
      '{"type":',
      '{"type":"ping"',
      "{'type':'ping'}",
      '{"type":"ping",}',
      'ping',
      '',
      ' ',
      '\u0000',
      'undefined',
      '{"type":"resume","seq":1}}',
      '[1,]',
      '"unterminated',
    )
    .map((value) => text(value, 'invalid JSON')),
  fc.string({ maxLength: 40 }).map((value) => text(value, 'random text')),
  // huge strings, under and over the payload cap
  fc
    .tuple(fc.constantFrom('type', 'seq', 'chats', 'x'), fc.integer({ min: MAX_PAYLOAD - 64, max: MAX_PAYLOAD + 1024 }))
    .map(([key, size]) => text(`{"type":"resume","${key}":"${'a'.repeat(size)}"}`, `huge ${key}`)),
  fc.integer({ min: 1000, max: 20_000 }).map((size) => json({ type: 'x'.repeat(size) }, 'long type')),
  // deep nesting, as arrays, objects and inside a resume
  fc.integer({ min: 100, max: 20_000 }).map((depth) => text(`${'['.repeat(depth)}${']'.repeat(depth)}`, `nested arrays ${depth}`)),
  fc.integer({ min: 100, max: 6_000 }).map((depth) => text(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`, `nested objects ${depth}`)),
  fc
    .integer({ min: 100, max: 6_000 })
    .map((depth) => text(`{"type":"resume","seq":0,"chats":${'{"1":'.repeat(depth)}1${'}'.repeat(depth)}}`, `nested chats ${depth}`)),
  // binary frames: JSON (a frame the server reads as text) and raw bytes
  structured.map((frame) => ({ ...frame, binary: true, label: `binary ${frame.label}` })),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ bytes: Buffer.from(bytes), binary: true, label: 'binary bytes' })),
  // text frames that are not UTF-8: a lone continuation byte, an overlong form, a surrogate half, a truncated sequence
  fc
    .tuple(
      fc.constantFrom(
        Buffer.from([0x80]),
        Buffer.from([0xc0, 0xaf]),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from([0xf0, 0x9f, 0x98]),
        Buffer.from([0xff]),
      ),
      fc.boolean(),
    )
    .map(([bad, wrapped]) => ({
      bytes: wrapped ? Buffer.concat([Buffer.from('{"type":"ping","x":"'), bad, Buffer.from('"}')]) : bad,
      binary: false,
      label: 'invalid UTF-8',
    })),
)

const frame = fc.oneof({ weight: 3, arbitrary: structured }, { weight: 2, arbitrary: malformed })

// ---------------------------------------------------------------- the fuzzing socket

/** A socket that keeps every frame (and anything that is not a JSON frame, as a failure). */
/** The fuzzed user's socket on the gateway, past its `ready`. */
async function openGateway(token: string): Promise<RawSocket> {
  const socket = await RawSocket.connect(`${server.url.replace(/^http/, 'ws')}${V2}/ws`, { authorization: `Bearer ${token}` })
  await socket.until((frames) => frames.some((f) => f.type === 'ready'))
  socket.frames.splice(0)
  return socket
}

/** Why a frame from the server is not of a documented shape, or null. */
function shapeProblem(frame: any): string | null {
  if (typeof frame !== 'object' || frame === null || typeof frame.type !== 'string') return 'not a {type} frame'
  const validate = controlFrames.get(frame.type)
  if (validate) return validate(frame) ? null : `a ${frame.type} frame that does not fit its schema: ${ajv.errorsText(validate.errors)}`
  if (frame.type === 'ready') return 'a second ready'
  // the answer to a request that was carried out
  if (frame.type === 'ack')
    return (typeof frame.id === 'string' || Number.isSafeInteger(frame.id)) && 'data' in frame
      ? null
      : `a malformed ack ${JSON.stringify(frame).slice(0, 200)}`
  // one of the user's own events (a valid resume replays them): numbered in the user's log or a chat's
  const numbered = Number.isSafeInteger(frame.seq) || (Number.isSafeInteger(frame.chat_id) && Number.isSafeInteger(frame.chat_seq))
  return numbered && typeof frame.data === 'object' && frame.data !== null
    ? null
    : `an unknown frame ${JSON.stringify(frame).slice(0, 200)}`
}

/** The closes the protocol documents for what was sent (RFC 6455): anything else is a failure. */
function allowedClose(sent: Outgoing, code: number): boolean {
  if (code === 1009) return sent.bytes.length > MAX_PAYLOAD
  if (code === 1007) return !sent.binary && !isUtf8(sent.bytes)
  return false
}

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return true
  } catch {
    return false
  }
}

// ---------------------------------------------------------------- the pass

test(`fuzz-frames: ${RUNS} malformed frames get error frames or a documented close, and the socket still answers`, {
  timeout: Math.max(300_000, RUNS * 100),
}, async () => {
  // bystanders: another user, and another device of the fuzzing user
  const bystander = await TestSocket.connect(server.url, bob.token)
  const login = await server.api.post(`${V2}/auth/login`, { login: alice.username, password: alice.password })
  const sameUser = await TestSocket.connect(server.url, login.body.data.session_token)

  let socket = await openGateway(alice.token)
  const failures: string[] = []
  const closes = new Map<number, number>()
  const answers = new Map<string, number>()
  let marker = 0
  let sent = 0

  const property = fc.asyncProperty(frame, async (out) => {
    sent++
    const mark = `marker-${++marker}`
    const what = `${out.label} (${out.bytes.length} bytes${out.binary ? ', binary' : ''}): ${out.bytes.toString('utf8', 0, 120)}`
    socket.ws.send(out.bytes, { binary: out.binary })
    socket.ws.send(JSON.stringify({ type: 'ping' }))
    socket.ws.send(JSON.stringify({ type: mark }))
    const isMarker = (f: any) => f.type === 'error' && typeof f.data?.message === 'string' && f.data.message.includes(`"${mark}"`)
    const answered = await socket.until((frames) => frames.some(isMarker))
    // up to the marker; what comes after it (a replay is read from the database, so it may come
    // after the pong and the marker) stays for the next round, where it is checked the same way
    const at = socket.frames.findIndex(isMarker)
    const frames = at >= 0 ? socket.frames.splice(0, at + 1).slice(0, -1) : socket.frames.splice(0)
    const problems: string[] = [...socket.junk.splice(0)]
    for (const f of frames) {
      const problem = shapeProblem(f)
      if (problem) problems.push(problem)
      const kind = f.type === 'error' || f.type === 'ack' || f.type === 'pong' || f.type === 'reset' ? f.type : 'event'
      answers.set(kind, (answers.get(kind) ?? 0) + 1)
    }
    if (socket.closed) {
      const { code, reason } = socket.closed
      closes.set(code, (closes.get(code) ?? 0) + 1)
      if (!allowedClose(out, code)) problems.push(`closed ${code} ${reason}`)
      // the control on a fresh socket: the server answers a valid frame
      socket = await openGateway(alice.token)
      socket.ws.send(JSON.stringify({ type: 'ping' }))
      if (!(await socket.until((f) => f.some((x) => x.type === 'pong')))) problems.push('a fresh socket got no pong')
      socket.frames.splice(0)
    } else if (!answered) {
      problems.push(`no answer to the marker within 10 s (got ${JSON.stringify(frames.map((f) => f.type))})`)
    } else if (!frames.some((f) => f.type === 'pong')) {
      problems.push('no pong: the socket stopped answering a valid frame')
    }
    if (problems.length) failures.push(`${what} → ${problems.join('; ')}`)
    return problems.length === 0
  })
  const started = Date.now()
  const details = await fc.check(property, { numRuns: RUNS, seed: FUZZ_SEED, endOnFailure: false, markInterruptAsFailure: false })
  if (details.errorInstance && !String(details.errorInstance).includes('returning false'))
    failures.push(`the fuzzer itself failed: ${String(details.errorInstance)}`)
  console.log(
    `# fuzz-frames: ${sent} frames in ${((Date.now() - started) / 1000).toFixed(1)} s; answers ${JSON.stringify(Object.fromEntries(answers))}; closes ${JSON.stringify(Object.fromEntries(closes))}`,
  )
  assert.deepEqual(failures.slice(0, 20), [], `${failures.length} bad answers`)
  assert.ok(sent >= Math.min(RUNS, 100), `${sent} frames sent`)
  // the pass did reach each kind of answer: errors, replays, resets, both closes
  assert.ok((answers.get('error') ?? 0) > sent / 4, 'most frames got an error frame')
  if (sent >= 300) {
    assert.ok((answers.get('event') ?? 0) > 0, 'a valid resume replayed events')
    assert.ok((answers.get('reset') ?? 0) > 0, 'a resume beyond the log got a reset')
    assert.ok((closes.get(1009) ?? 0) > 0 && (closes.get(1007) ?? 0) > 0, 'oversized and non-UTF-8 frames were sent and closed')
  }

  // the others were not touched: no error, no close, and a message still reaches them (the control)
  assert.equal(bystander.closed, null)
  assert.equal(sameUser.closed, null)
  for (const socket_ of [bystander, sameUser])
    assert.deepEqual(
      socket_.received.filter((f) => f.type === 'error' || f.type === 'reset'),
      [],
    )
  await carol.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'after the fuzz' })
  assert.equal((await bystander.next('message.new')).data.message.content, 'after the fuzz')
  await carol.api.post(`${V2}/messages/send`, { receiver_id: alice.id, content: 'to alice after the fuzz' })
  assert.equal((await sameUser.next('message.new')).data.message.content, 'to alice after the fuzz')
  // and the fuzzing socket still works as a socket: a message reaches it too
  assert.ok(
    await socket.until((frames) => frames.some((f) => f.type === 'message.new' && f.data.message.content === 'to alice after the fuzz')),
    'the fuzzed socket gets the message',
  )
  assert.equal((await fetch(`${server.url}/health`)).status, 200, 'the server is still up')
  socket.close()
})
