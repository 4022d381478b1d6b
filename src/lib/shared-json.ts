/**
 * JSON text made once for an object that several outgoing texts embed (a new message goes out in
 * its sender's ack and in a message.new frame to each member's sockets). `share(value)` marks an
 * object that will not change any more; `stringifyShared` gives exactly `JSON.stringify`'s text,
 * reusing a marked object's text (stringified the first time it is needed) wherever it meets one
 * in the first levels of plain objects.
 */

/** marked objects: their text once made, null until then */
const texts = new WeakMap<object, string | null>()

/** Marks `value` as final: from now on its JSON text may be made once and reused. */
export function share(value: object): void {
  if (!texts.has(value)) texts.set(value, null)
}

/** Whether `value` is a marked object. */
export const isShared = (value: unknown): boolean => typeof value === 'object' && value !== null && texts.has(value)

/**
 * `JSON.stringify(value)`, reusing the text of marked objects among `value` and the values of its
 * plain objects down to `depth` levels (arrays and deeper levels are stringified as they are).
 */
export function stringifyShared(value: unknown, depth = 2): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value)
  const text = texts.get(value)
  if (text !== undefined) {
    if (text !== null) return text
    const made = JSON.stringify(value)
    texts.set(value, made)
    return made
  }
  // only a plain object is walked here (an array, a Date or anything with toJSON as JSON.stringify does it)
  if (depth === 0 || Object.getPrototypeOf(value) !== Object.prototype || 'toJSON' in value) return JSON.stringify(value)
  let out = '{'
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key]
    // skipped as JSON.stringify skips them in an object
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${stringifyShared(item, depth - 1)}`
  }
  return `${out}}`
}
