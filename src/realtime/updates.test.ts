import assert from 'node:assert/strict'
import test from 'node:test'
import { prunes } from './updates.js'

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
    const cuts = prunes(users.map((userId) => ({ userId, seq })), 10_000)
    if (cuts.length) perSeq.set(seq, cuts.length)
  }
  // 32 users × 2 prunes over 200 seqs, never more than one user at the same seq
  assert.equal([...perSeq.values()].reduce((a, b) => a + b, 0), 64)
  assert.ok(Math.max(...perSeq.values()) === 1)
})
