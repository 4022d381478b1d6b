/**
 * JSON made once for an object that several outgoing frames embed (a new message goes out in its
 * sender's ack and in a message.new frame to each member's sockets). `share(value)` marks an
 * object that will not change any more; `jsonPieces` gives exactly `JSON.stringify`'s text as
 * pieces: strings for what is around, and for a marked object wherever it meets one in the first
 * levels of plain objects, that object's text as UTF-8 bytes, made the first time they are needed
 * and reused by every later frame. A frame is then written by copying those bytes
 * (realtime/text-frames.ts), where one string per frame had V8 join the message's text into it
 * and encode it again for each socket.
 */

/**
 * A marked object's UTF-8 text once made (null until then), in a holder kept on the object under a
 * symbol: JSON and Object.keys skip symbol keys, a property read is cheaper than a WeakMap lookup,
 * and the holder can still be filled once the object is frozen. The property is not enumerable,
 * so a copy (`{ ...message, is_read: true }`) does not carry it: a copy is an object of its own.
 */
const TEXT = Symbol('shared JSON text')
type Marked = { [TEXT]?: { bytes: Buffer | null } }

/** JSON text in pieces: strings, and the UTF-8 bytes of marked objects' texts. */
export type JsonPieces = (string | Buffer)[]

/** Marks `value` as final: from now on its JSON text may be made once and reused. */
export function share(value: object): void {
  const marked = value as Marked
  // an object that can take no new property is simply never shared (stringified each time)
  if (marked[TEXT] === undefined && Object.isExtensible(value)) Object.defineProperty(value, TEXT, { value: { bytes: null } })
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
 * `JSON.stringify(value)` in pieces, with the bytes of marked objects among `value` and the values
 * of its plain objects down to `depth` levels (arrays and deeper levels are stringified as they are).
 * Strings next to each other are one piece.
 */
export function jsonPieces(value: unknown, depth = 2): JsonPieces {
  const pieces: JsonPieces = []
  const rest = addPieces(value, depth, pieces, '')
  if (rest !== '') pieces.push(rest)
  return pieces
}

/** The whole text of `pieces` as one string. */
export const piecesText = (pieces: JsonPieces): string =>
  pieces.map((piece) => (typeof piece === 'string' ? piece : piece.toString('utf8'))).join('')

/**
 * Adds `value`'s JSON after `before` (text not yet in `pieces`) and returns the text not yet in
 * `pieces` after it.
 */
function addPieces(value: unknown, depth: number, pieces: JsonPieces, before: string): string {
  if (typeof value !== 'object' || value === null) return before + scalarJson(value)
  const holder = (value as Marked)[TEXT]
  if (holder !== undefined) {
    if (before !== '') pieces.push(before)
    pieces.push((holder.bytes ??= Buffer.from(JSON.stringify(value))))
    return ''
  }
  // only a plain object is walked here (an array, a Date or anything with toJSON as JSON.stringify does it)
  if (depth === 0 || Object.getPrototypeOf(value) !== Object.prototype || 'toJSON' in value) return before + JSON.stringify(value)
  let text = before
  let first = true
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key]
    // skipped as JSON.stringify skips them in an object
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue
    text = addPieces(item, depth - 1, pieces, `${text}${first ? '{' : ','}${keyText(key)}:`)
    first = false
  }
  return first ? `${text}{}` : `${text}}`
}

/** A value that is not an object (nor null) as JSON.stringify writes it inside an object. */
function scalarJson(value: unknown): string {
  switch (typeof value) {
    case 'number':
      // as JSON.stringify: NaN and the infinities are null, -0 is 0
      return Number.isFinite(value) ? String(value) : 'null'
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object':
      return 'null'
    default:
      return JSON.stringify(value)
  }
}
