/** Epoch milliseconds (storage) ↔ ISO 8601 with Z (API). */

/**
 * The last conversion, reused: under load many responses in a row carry the same millisecond (a
 * send's timestamp is its own arrival time), and formatting a Date is a visible share of a small
 * request.
 */
let lastMs = Number.NaN
let lastIso = ''

export const iso = (ms: number): string => {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString()
    lastMs = ms
  }
  return lastIso
}
export const isoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : iso(ms))

export interface Clock {
  now(): number
}
export const systemClock: Clock = { now: () => Date.now() }
