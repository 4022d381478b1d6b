/** Reads a JSON column: SQLite returns text, PostgreSQL's jsonb an already parsed value. */
export function fromJson<T = unknown>(value: unknown): T | null {
  if (value === null || value === undefined) return null
  if (typeof value === 'string') {
    try {
      return JSON.parse(value) as T
    } catch {
      return null
    }
  }
  return value as T
}
