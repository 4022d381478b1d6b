/**
 * JSON text made once for an object that several outgoing texts embed (a new message goes out in
 * its sender's ack and in a message.new frame to each member's sockets). `share(value)` marks an
 * object that will not change any more; `stringifyShared` gives exactly `JSON.stringify`'s text,
 * reusing a marked object's text (stringified the first time it is needed) wherever it meets one
 * in the first levels of plain objects.
 */

/**
 * A marked object's text once made (null until then), in a holder kept on the object under a
 * symbol: JSON and Object.keys skip symbol keys, a property read is cheaper than a WeakMap lookup,
 * and the holder can still be filled once the object is frozen. The property is not enumerable,
 * so a copy (`{ ...message, is_read: true }`) does not carry it: a copy is an object of its own.
 */
const TEXT = Symbol('shared JSON text')
type Marked = { [TEXT]?: { text: string | null } }

/** Marks `value` as final: from now on its JSON text may be made once and reused. */
export function share(value: object): void {
  const marked = value as Marked
  // an object that can take no new property is simply never shared (stringified each time)
  if (marked[TEXT] === undefined && Object.isExtensible(value)) Object.defineProperty(value, TEXT, { value: { text: null } })
}

/** Whether `value` is a marked object. */
export const isShared = (value: unknown): boolean => typeof value === 'object' && value !== null && (value as Marked)[TEXT] !== undefined

/**
 * Object keys as JSON text, made once: a frame's few keys come back with every frame. Bounded, as
 * a walked object may carry keys that are data.
 */
const keyTexts = new Map<string, string>()
const KEY_TEXTS_MAX = 1000

function keyText(key: string): string {
  let text = keyTexts.get(key)
  if (text === undefined) {
    text = JSON.stringify(key)
    if (keyTexts.size < KEY_TEXTS_MAX) keyTexts.set(key, text)
  }
  return text
}

/**
 * `JSON.stringify(value)`, reusing the text of marked objects among `value` and the values of its
 * plain objects down to `depth` levels (arrays and deeper levels are stringified as they are).
 */
export function stringifyShared(value: unknown, depth = 2): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'number':
      // as JSON.stringify: NaN and the infinities are null, -0 is 0
      return Number.isFinite(value) ? String(value) : 'null'
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object':
      if (value === null) return 'null'
      break
    default:
      return JSON.stringify(value)
  }
  const holder = (value as Marked)[TEXT]
  if (holder !== undefined) return (holder.text ??= JSON.stringify(value))
  // only a plain object is walked here (an array, a Date or anything with toJSON as JSON.stringify does it)
  if (depth === 0 || Object.getPrototypeOf(value) !== Object.prototype || 'toJSON' in value) return JSON.stringify(value)
  let out = ''
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key]
    // skipped as JSON.stringify skips them in an object
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue
    out += `${out === '' ? '{' : ','}${keyText(key)}:${stringifyShared(item, depth - 1)}`
  }
  return out === '' ? '{}' : `${out}}`
}
