import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { iso, isoOrNull, parseInstant } from './time.js'

test('iso formats every millisecond as Date does, also when the same one repeats or alternates', () => {
  const samples = [0, 1_795_302_139_003, 1_795_302_139_003, 1_795_302_139_004, 1_795_302_139_003, -1, 8.64e15]
  for (const ms of samples) assert.equal(iso(ms), new Date(ms).toISOString())
  assert.equal(isoOrNull(null), null)
  assert.equal(isoOrNull(undefined), null)
  assert.equal(isoOrNull(1_000), '1970-01-01T00:00:01.000Z')
})

test('iso agrees with Date across minutes, hours, years, before 1970 and at the ends of its range', () => {
  const samples = [
    59_999,
    60_000,
    60_001,
    3_599_999,
    3_600_000,
    1_798_761_599_999,
    1_798_761_600_000,
    1_798_761_600_010,
    1_798_761_600_100,
    -1,
    -59_999,
    -60_000,
    -60_001,
    -62_198_755_200_000,
    253_402_300_799_999,
    253_402_300_800_000,
    8.64e15 - 1,
    -8.64e15,
    1.5,
    1_000.75,
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

test('parseInstant takes RFC 3339 instants and refuses what names no real instant', () => {
  for (const [text, ms] of [
    ['2026-11-24T20:00:00Z', Date.UTC(2026, 10, 24, 20)],
    ['2026-11-24T20:00:00.5Z', Date.UTC(2026, 10, 24, 20, 0, 0, 500)],
    ['2026-11-24T20:00:00.123456789Z', Date.UTC(2026, 10, 24, 20, 0, 0, 123)],
    ['2026-11-24T23:30:00+03:30', Date.UTC(2026, 10, 24, 20)],
    ['2026-11-24T16:00:00-04:00', Date.UTC(2026, 10, 24, 20)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['2000-02-29T00:00:00Z', Date.UTC(2000, 1, 29)],
    ['0050-06-01T00:00:00Z', new Date('0050-06-01T00:00:00Z').getTime()],
  ] as const)
    assert.equal(parseInstant(text), ms, text)
  for (const text of [
    '2016-12-31T23:59:60Z',
    '2026-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-11-24T24:00:00Z',
    '2026-11-24T20:60:00Z',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '2026-11-24T20:00:00+24:00',
    '2026-11-24T20:00:00',
    '2026-11-24',
    '+275760-09-13T00:00:00Z',
    'not a date',
    '',
    '0050-06-01 00:00:00Z',
    '2026-11-24 20:00:00Z',
  ])
    assert.equal(parseInstant(text), null, text)
})

test('every timestamp parseInstant accepts, Date.parse reads as the same instant', () => {
  const digits = (max: number, width = 2) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(width, '0'))
  const timestamp = fc
    .tuple(
      digits(9999, 4),
      digits(13),
      digits(32),
      fc.constantFrom('T', 't', ' '),
      digits(24),
      digits(60),
      digits(61),
      fc.oneof(
        fc.constant(''),
        fc.integer({ min: 1, max: 9 }).chain((width) => digits(10 ** width - 1, width).map((f) => `.${f}`)),
      ),
      fc.oneof(
        fc.constantFrom('Z', 'z'),
        fc.tuple(fc.constantFrom('+', '-'), digits(24), digits(60)).map(([sign, h, m]) => `${sign}${h}:${m}`),
      ),
    )
    .map(([y, mo, d, t, h, mi, s, fraction, zone]) => `${y}-${mo}-${d}${t}${h}:${mi}:${s}${fraction}${zone}`)
  let accepted = 0
  fc.assert(
    fc.property(timestamp, (text) => {
      const ms = parseInstant(text)
      if (ms !== null) accepted++
      return ms === null || Date.parse(text) === ms
    }),
    { numRuns: 20_000, seed: 20 },
  )
  // control: the generator makes real instants too, not only refusals
  assert.ok(accepted > 1000, `${accepted} accepted`)
})
