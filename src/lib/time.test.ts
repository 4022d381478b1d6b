import assert from 'node:assert/strict'
import { test } from 'node:test'
import { iso, isoOrNull } from './time.js'

test('iso formats every millisecond as Date does, also when the same one repeats or alternates', () => {
  const samples = [0, 1_795_302_139_003, 1_795_302_139_003, 1_795_302_139_004, 1_795_302_139_003, -1, 8.64e15]
  for (const ms of samples) assert.equal(iso(ms), new Date(ms).toISOString())
  assert.equal(isoOrNull(null), null)
  assert.equal(isoOrNull(undefined), null)
  assert.equal(isoOrNull(1_000), '1970-01-01T00:00:01.000Z')
})

test('iso still refuses a time Date cannot represent', () => {
  assert.throws(() => iso(Number.NaN), RangeError)
  assert.throws(() => iso(8.64e15 + 1), RangeError)
})
