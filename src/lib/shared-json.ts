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
type Stringify = (value: object) => string
type Marked = { [TEXT]?: { text: string | null; stringify: Stringify } }

/**
 * Marks `value` as final: from now on its JSON text may be made once and reused. `stringify`
 * makes it: JSON.stringify, or a serializer for the value's shape (`shapeJson`) giving the same text.
 */
export function share<T extends object>(value: T, stringify: (value: T) => string = JSON.stringify): void {
  const marked = value as Marked
  // an object that can take no new property is simply never shared (stringified each time)
  if (marked[TEXT] === undefined && Object.isExtensible(value)) Object.defineProperty(value, TEXT, { value: { text: null, stringify } })
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
  if (holder !== undefined) return (holder.text ??= holder.stringify(value))
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

/** A string's JSON text needs escapes if it holds a control character, a quote, a backslash or a surrogate (paired or not). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const NEEDS_ESCAPES = /[\u0000-\u001f"\\\ud800-\udfff]/

/** Skeletons kept per shape; past this many sets of null fields, a new set's is made each time. */
const SKELETONS_MAX = 1024

/** One shape's text with its null fields written in: the texts between the other fields' values. */
interface Skeleton {
  /** `between[0]`, value of `fields[present[0]]`, `between[1]`, …, `between[present.length]` */
  between: string[]
  present: number[]
}

/**
 * `JSON.stringify` for objects of one shape: the own enumerable keys `fields`, in that order, as an
 * object literal makes them (a message view, say). JSON.stringify writes every key through its
 * escaping loop, about 300 instructions each for the message's 31 keys, a tenth of a socket send's
 * work (bench/instructions.ts --path socket). Here the keys, and the null values between them, are
 * text made once per set of null fields; only the other values are written, a string as it is
 * when it needs no escapes. The text is flattened once (a rope would be copied into every frame
 * that embeds it). An object of another size, or with a value JSON.stringify would leave out or
 * refuse, is JSON.stringify's; the caller vouches that the keys, if as many, are `fields` in order.
 */
export function shapeJson<T extends object>(fields: readonly (keyof T & string)[]): (value: T) => string {
  // the set of null fields is a bit mask, exact up to 2^53
  if (fields.length > 52) return JSON.stringify
  const keys = fields.map((field, i) => `${i === 0 ? '{' : ','}${JSON.stringify(field)}:`)
  const skeletons = new Map<number, Skeleton>()
  const skeleton = (values: unknown[], nulls: number): Skeleton => {
    let made = skeletons.get(nulls)
    if (made !== undefined) return made
    made = { between: [], present: [] }
    let text = ''
    for (let i = 0; i < values.length; i++) {
      text += keys[i]
      if (values[i] === null) text += 'null'
      else {
        made.between.push(text)
        made.present.push(i)
        text = ''
      }
    }
    made.between.push(`${keys.length === 0 ? '{' : text}}`)
    // bounded: which fields are null is partly the senders' choice
    if (skeletons.size < SKELETONS_MAX) skeletons.set(nulls, made)
    return made
  }
  return (value: T): string => {
    const values = Object.values(value)
    if (values.length !== keys.length) return JSON.stringify(value)
    let nulls = 0
    for (let i = 0, bit = 1; i < values.length; i++, bit *= 2) if (values[i] === null) nulls += bit
    const { between, present } = skeleton(values, nulls)
    let text = between[0]
    for (let j = 0; j < present.length; j++) {
      const item = values[present[j]]
      let json: string
      switch (typeof item) {
        case 'string':
          json = NEEDS_ESCAPES.test(item) ? JSON.stringify(item) : `"${item}"`
          break
        case 'number':
          // as JSON.stringify: NaN and the infinities are null, -0 is 0
          json = Number.isFinite(item) ? String(item) : 'null'
          break
        case 'boolean':
          json = item ? 'true' : 'false'
          break
        case 'object':
          json = JSON.stringify(item)
          // a toJSON that gives undefined leaves the key out
          if (json === undefined) return JSON.stringify(value)
          break
        default:
          // undefined, a function or a symbol (left out with its key), a bigint (refused)
          return JSON.stringify(value)
      }
      text += json + between[j + 1]
    }
    // reading a character flattens the rope in place
    text.charCodeAt(0)
    return text
  }
}
