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

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/

/**
 * An RFC 3339 timestamp as epoch milliseconds, or null unless it names a real instant: every field
 * in range for its calendar (no February 30, no hour 24, no leap second: JavaScript time has none),
 * offsets up to ±23:59, years 0001–9999. Date and time are joined by T, as RFC 3339's grammar and
 * ISO 8601 say: with the space RFC 3339 lets applications use, Date.parse reads years 0–99 as
 * 1900–2099 (and it must read every accepted timestamp as this does).
 */
export function parseInstant(text: string): number | null {
  const m = RFC3339.exec(text)
  if (!m) return null
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number)
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null
  const offsetHours = m[10] === undefined ? 0 : Number(m[10])
  const offsetMinutes = m[11] === undefined ? 0 : Number(m[11])
  if (offsetHours > 23 || offsetMinutes > 59) return null
  // the day must exist in that month (Date.UTC would roll February 30 over into March)
  if (day > new Date(Date.UTC(2000, month, 0)).getUTCDate() || (month === 2 && day === 29 && !isLeapYear(year))) return null
  const fraction = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0
  const sign = m[9] === '-' ? -1 : 1
  const local = Date.UTC(year, month - 1, day, hour, minute, second, fraction) + (year < 100 ? yearShift(year) : 0)
  return local - sign * (offsetHours * 60 + offsetMinutes) * 60_000
}

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
/** Date.UTC reads years 0–99 as 1900–1999: the difference back to the year as written */
const yearShift = (year: number) => {
  const date = new Date(0)
  date.setUTCFullYear(year, 0, 1)
  return date.getTime() - Date.UTC(year, 0, 1)
}
