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

test('iso agrees with Date across minutes, hours, years, before 1970 and at the ends of its range', () => {
  const samples = [
    59_999, 60_000, 60_001, 3_599_999, 3_600_000, 1_798_761_599_999, 1_798_761_600_000, 1_798_761_600_010, 1_798_761_600_100,
    -1, -59_999, -60_000, -60_001, -62_198_755_200_000, 253_402_300_799_999, 253_402_300_800_000, 8.64e15 - 1, -8.64e15, 1.5, 1_000.75,
  ]
  for (const ms of samples) assert.equal(iso(ms), new Date(ms).toISOString(), String(ms))
  // every millisecond of a minute, in order and then in reverse
  const base = 1_798_761_540_000
  for (let ms = base; ms < base + 60_000; ms += 7) assert.equal(iso(ms), new Date(ms).toISOString())
  for (let ms = base + 59_999; ms >= base; ms -= 13) assert.equal(iso(ms), new Date(ms).toISOString())
})

test('iso still refuses a time Date cannot represent', () => {
  assert.throws(() => iso(Number.NaN), RangeError)
  assert.throws(() => iso(8.64e15 + 1), RangeError)
})
