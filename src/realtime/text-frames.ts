/**
 * WebSocket text frames as a server sends them (RFC 6455 §5.2: FIN set, opcode 1, unmasked, no
 * extension), written straight into one buffer. A socket's frames of one burst leave in one write
 * (realtime/connection.ts); framed here, each costs one UTF-8 encoding into that buffer, where
 * handing them to ws one by one cost a length scan of the text, a header buffer and a chunk of a
 * vectored write each. The gateway turns permessage-deflate off, so no frame is ever compressed.
 */

/** Past this many UTF-16 units a text may take 65,536 bytes or more (3 bytes a unit at most). */
const SURELY_SHORT = Math.floor(0xffff / 3)

/** The frames of `texts`, in order, in one buffer. */
export function textFrames(texts: readonly string[]): Buffer {
  // room for the longest each could be: a 10-byte header and 3 bytes per UTF-16 unit
  let room = 0
  for (const text of texts) room += 10 + 3 * text.length
  const out = Buffer.allocUnsafe(room)
  let at = 0
  for (const text of texts) {
    if (text.length > 125 && text.length <= SURELY_SHORT) {
      // 126–65,535 bytes for sure: a 4-byte header, its length known once the text is written
      const length = out.write(text, at + 4)
      out[at] = 0x81
      out[at + 1] = 126
      out.writeUInt16BE(length, at + 2)
      at += 4 + length
      continue
    }
    const length = Buffer.byteLength(text)
    out[at] = 0x81
    if (length <= 125) {
      out[at + 1] = length
      at += 2
    } else if (length <= 0xffff) {
      out[at + 1] = 126
      out.writeUInt16BE(length, at + 2)
      at += 4
    } else {
      out[at + 1] = 127
      out.writeUInt32BE(0, at + 2)
      out.writeUInt32BE(length, at + 6)
      at += 10
    }
    at += out.write(text, at)
  }
  return out.subarray(0, at)
}
