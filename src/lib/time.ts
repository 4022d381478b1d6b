/** Epoch milliseconds (storage) ↔ ISO 8601 with Z (API). */

const MINUTE_MS = 60_000

/**
 * The minute of the last conversion and its text up to the seconds ('2026-11-22T01:02:'): every
 * time in that minute is the prefix plus seconds and milliseconds, built without a Date. Under
 * load nearly every response falls in the same minute as the one before, and Date's own
 * formatting is a visible share of a small request (a message carries its timestamp, a history
 * page fifty).
 */
let minuteStart = Number.NaN
let minutePrefix = ''
/** 'ss' for each second of a minute, '.mmmZ' for each millisecond of a second */
const SECONDS = Array.from({ length: 60 }, (_, s) => String(s).padStart(2, '0'))
const MILLIS = Array.from({ length: 1000 }, (_, ms) => `.${String(ms).padStart(3, '0')}Z`)

export const iso = (ms: number): string => {
  // NaN and fractions go to Date (which throws its RangeError for a time it cannot represent)
  if (!Number.isInteger(ms)) return new Date(ms).toISOString()
  let offset = ms - minuteStart
  if (!(offset >= 0 && offset < MINUTE_MS)) {
    minutePrefix = new Date(ms).toISOString().slice(0, -'ss.mmmZ'.length)
    minuteStart = ms - (((ms % MINUTE_MS) + MINUTE_MS) % MINUTE_MS)
    offset = ms - minuteStart
  }
  const seconds = Math.floor(offset / 1000)
  return minutePrefix + SECONDS[seconds] + MILLIS[offset - seconds * 1000]
}
export const isoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : iso(ms))

export interface Clock {
  now(): number
}
export const systemClock: Clock = { now: () => Date.now() }
