import assert from 'node:assert/strict'
import test from 'node:test'
import { prunes, sliceBounds } from './updates.js'

test('prunes: each log keeps its newest `keep` updates, deleting in steps of keep/100', () => {
  // keep 10: every update past the 10th prunes the one that fell out of the window
  assert.deepEqual(prunes([{ userId: 7, seq: 11 }], 10), [{ userId: 7, seq: 1 }])
  assert.deepEqual(prunes([{ userId: 7, seq: 10 }], 10), [])
  // keep 10,000: a 100-row delete when seq + owner passes a multiple of 100
  assert.deepEqual(prunes([{ userId: 1, seq: 10_099 }], 10_000), [{ userId: 1, seq: 99 }])
  assert.deepEqual(prunes([{ userId: 1, seq: 10_100 }], 10_000), [])
})

test('prunes: users whose seqs advance together prune at different moments', () => {
  const users = Array.from({ length: 32 }, (_, i) => i + 1)
  const perSeq = new Map<number, number>()
  for (let seq = 10_001; seq <= 10_200; seq++) {
    const cuts = prunes(
      users.map((userId) => ({ userId, seq })),
      10_000,
    )
    if (cuts.length) perSeq.set(seq, cuts.length)
  }
  // 32 users × 2 prunes over 200 seqs, never more than one user at the same seq
  assert.equal(
    [...perSeq.values()].reduce((a, b) => a + b, 0),
    64,
  )
  assert.ok(Math.max(...perSeq.values()) === 1)
})

test('sliceBounds: a round cuts its users into about ten slices of about equal rows, never splitting a user', () => {
  const users: [number, number][] = Array.from({ length: 100 }, (_, i) => [i + 1, 10])
  const bounds = sliceBounds(users)
  // 1,000 rows: ten slices of 100 rows (ten users), the last ending past every user
  assert.deepEqual(bounds, [10, 20, 30, 40, 50, 60, 70, 80, 90, Number.MAX_SAFE_INTEGER])
  // a user with more rows than a slice's share is a slice of their own
  const heavy = sliceBounds([
    [1, 10],
    [2, 500],
    [3, 10],
    [4, 10],
    [5, 10],
  ])
  assert.deepEqual(heavy, [2, Number.MAX_SAFE_INTEGER])
  // what is left after the last full slice goes with it to the end
  assert.deepEqual(sliceBounds(Array.from({ length: 26 }, (_, i) => [i + 1, 11] as [number, number])), [
    3,
    6,
    9,
    12,
    15,
    18,
    21,
    24,
    Number.MAX_SAFE_INTEGER,
  ])
})

test('sliceBounds: a small round moves whole, in one slice', () => {
  assert.deepEqual(sliceBounds([]), [Number.MAX_SAFE_INTEGER])
  assert.deepEqual(
    sliceBounds([
      [5, 200],
      [9, 56],
    ]),
    [Number.MAX_SAFE_INTEGER],
  )
  // positive control: one row more is cut
  assert.equal(
    sliceBounds([
      [5, 200],
      [9, 57],
    ]).length,
    2,
  )
})
