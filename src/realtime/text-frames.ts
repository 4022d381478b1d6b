/**
 * WebSocket text frames as a server sends them (RFC 6455 §5.2: FIN set, opcode 1, unmasked, no
 * extension), written straight into one buffer. A socket's frames of one burst leave in one write
 * (realtime/connection.ts); framed here, a text costs one UTF-8 encoding into that buffer (a
 * shared message's bytes, made once, a copy), where handing them to ws one by one cost a length
 * scan of the text, a header buffer and a chunk of a vectored write each. The gateway turns
 * permessage-deflate off, so no frame is ever compressed.
 */
import type { JsonPieces } from '../lib/shared-json.js'

/** A frame's text: one string, or pieces of it (lib/shared-json.ts), the shared ones as their UTF-8 bytes. */
export type FrameText = string | JsonPieces

/** Past this many UTF-16 units a text may take 65,536 bytes or more (3 bytes a unit at most). */
const SURELY_SHORT = Math.floor(0xffff / 3)

/** How long a frame's text is, about (UTF-16 units and bytes): for limits on what is held. */
export const textLength = (text: FrameText): number => {
  if (typeof text === 'string') return text.length
  let length = 0
  for (const piece of text) length += piece.length
  return length
}

/** The frames of `texts`, in order, in one buffer. */
export function textFrames(texts: readonly FrameText[]): Buffer {
  // room for the longest each could be: a 10-byte header and 3 bytes per UTF-16 unit, the bytes of pieces as they are
  let room = 0
  for (const text of texts) {
    if (typeof text === 'string') room += 10 + 3 * text.length
    else {
      room += 10
      for (const piece of text) room += typeof piece === 'string' ? 3 * piece.length : piece.length
    }
  }
  const out = Buffer.allocUnsafe(room)
  let at = 0
  for (const text of texts) {
    if (typeof text !== 'string') {
      at = writePieces(out, at, text)
      continue
    }
    if (text.length > 125 && text.length <= SURELY_SHORT) {
      // 126–65,535 bytes for sure: a 4-byte header, its length known once the text is written
      const length = out.write(text, at + 4)
      out[at] = 0x81
      out[at + 1] = 126
      out.writeUInt16BE(length, at + 2)
      at += 4 + length
      continue
    }
    at = writeHeader(out, at, Buffer.byteLength(text))
    at += out.write(text, at)
  }
  return out.subarray(0, at)
}

/** A frame's header for a text of `length` bytes at `at`; returns where the text goes. */
function writeHeader(out: Buffer, at: number, length: number): number {
  out[at] = 0x81
  if (length <= 125) {
    out[at + 1] = length
    return at + 2
  }
  if (length <= 0xffff) {
    out[at + 1] = 126
    out.writeUInt16BE(length, at + 2)
    return at + 4
  }
  out[at + 1] = 127
  out.writeUInt32BE(0, at + 2)
  out.writeUInt32BE(length, at + 6)
  return at + 10
}

/** A frame of pieces: its length summed (the strings around shared texts are short), then each piece copied or encoded. */
function writePieces(out: Buffer, at: number, pieces: JsonPieces): number {
  let length = 0
  for (const piece of pieces) length += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.length
  at = writeHeader(out, at, length)
  for (const piece of pieces) at += typeof piece === 'string' ? out.write(piece, at) : piece.copy(out, at)
  return at
}
