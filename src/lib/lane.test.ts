import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Lane, type Turn } from './lane.js'

/** A promise and its resolve, to finish a task when the test says so. */
function gate() {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

test('each request starts once the one before it is done, unless that one was placed', async () => {
  const lane = new Lane()
  const started: string[] = []
  const first = gate()
  const second = gate()
  let turnOfSecond: Turn | null = null
  const a = lane.run(async () => {
    started.push('a')
    await first.promise
  })
  const b = lane.run(async (turn) => {
    started.push('b')
    turnOfSecond = turn
    await second.promise
  })
  const c = lane.run(async () => {
    started.push('c')
  })
  await settle()
  assert.deepEqual(started, ['a'], 'b waits while a runs unplaced')
  first.open()
  await a
  await settle()
  assert.deepEqual(started, ['a', 'b'], 'b starts once a is done; c waits for b')
  turnOfSecond!.placed()
  await settle()
  assert.deepEqual(started, ['a', 'b', 'c'], 'c starts once b is placed, before b is done')
  await c
  assert.equal(lane.idle, false, 'b is still in progress')
  second.open()
  await b
  assert.equal(lane.idle, true)
})

test('a placed request that defers waits for the earlier ones, and later ones see it', async () => {
  const lane = new Lane()
  const events: string[] = []
  const earlierDone = gate()
  const hold = lane.run(async (turn) => {
    turn.placed()
    await earlierDone.promise
    events.push('earlier done')
  })
  const deferring = lane.run(async (turn) => {
    turn.placed()
    assert.equal(turn.inOrder(), true, 'nothing earlier deferred')
    const waited = turn.defer()
    events.push('deferred')
    await waited
    events.push('deferring goes on')
  })
  const later = lane.run(async (turn) => {
    events.push(`later in order: ${turn.inOrder()}`)
  })
  await settle()
  assert.deepEqual(events, ['deferred', 'later in order: false'])
  earlierDone.open()
  await Promise.all([hold, deferring, later])
  assert.deepEqual(events, ['deferred', 'later in order: false', 'earlier done', 'deferring goes on'])
  // once the deferred request is done, a new one is in order again
  await lane.run(async (turn) => assert.equal(turn.inOrder(), true))
  assert.equal(lane.idle, true)
})

test('a request that defers without having been placed holds the next one until it is done', async () => {
  const lane = new Lane()
  const events: string[] = []
  const done = gate()
  const deferring = lane.run(async (turn) => {
    await turn.defer()
    events.push('general path')
    await done.promise
    events.push('done')
  })
  const next = lane.run(async () => void events.push('next'))
  await settle()
  assert.deepEqual(events, ['general path'])
  done.open()
  await Promise.all([deferring, next])
  assert.deepEqual(events, ['general path', 'done', 'next'])
})

test('a request that fails still lets the next one start', async () => {
  const lane = new Lane()
  const failed = lane.run(async () => {
    throw new Error('refused')
  })
  const next = lane.run(async () => 'ran')
  await assert.rejects(failed, /refused/)
  assert.equal(await next, 'ran')
  assert.equal(lane.idle, true)
})
