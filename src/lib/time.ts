/** Epoch milliseconds (storage) ↔ ISO 8601 with Z (API). */
export const iso = (ms: number): string => new Date(ms).toISOString()
export const isoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : iso(ms))

export interface Clock {
  now(): number
}
export const systemClock: Clock = { now: () => Date.now() }
