/**
 * What a file really is, from its first bytes (never from the client's name or Content-Type), and
 * how it may be served. file-type knows the binary formats; text is told apart here, with markup
 * (HTML, SVG, XML) named as such so that it is never served inline.
 */
import { fileTypeFromBuffer } from 'file-type'
import type { FileType } from '../../db/tables.js'

/** Enough leading bytes for file-type to recognize every format it knows. */
export const HEAD_BYTES = 4100

export interface Detected {
  mime_type: string
  /** extension of the served path, without the dot */
  ext: string
  file_type: FileType
}

const MARKUP: [RegExp, string, string][] = [
  [/<svg[\s>]/i, 'image/svg+xml', 'svg'],
  [/<(!doctype\s+html|html|head|body|script|iframe|meta|style|object|embed)[\s>/]/i, 'text/html', 'html'],
  [/^<\?xml[\s?]/i, 'application/xml', 'xml'],
]

/** Text when it decodes as UTF-8 (a character cut at the end of the sample is fine) and holds no NUL. */
function isText(head: Buffer): boolean {
  if (head.includes(0)) return false
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, head.length < HEAD_BYTES ? head.length : head.length - 3))
    return true
  } catch {
    return false
  }
}

function fileTypeOf(mime: string): FileType {
  if (mime === 'image/svg+xml') return 'document'
  const family = mime.split('/')[0]
  return family === 'image' || family === 'video' || family === 'audio' ? family : 'document'
}

export async function detectType(head: Buffer): Promise<Detected> {
  const found = await fileTypeFromBuffer(head)
  let mime = found?.mime ?? 'application/octet-stream'
  // one lower-case word, as served paths need ('tar.gz' → 'gz', 'Z' → 'z')
  let ext = found ? (found.ext.split('.').pop() ?? found.ext).toLowerCase() : 'bin'
  if ((!found || mime === 'application/xml') && isText(head)) {
    const text = head
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trimStart()
    const markup = MARKUP.find(([pattern]) => pattern.test(text))
    ;[mime, ext] = markup ? [markup[1], markup[2]] : found ? [mime, ext] : ['text/plain', 'txt']
  }
  return { mime_type: mime, ext, file_type: fileTypeOf(mime) }
}

/**
 * Whether a type may be shown inline on this origin: passive media and plain text. Everything else
 * (HTML, SVG, XML, PDF, scripts, unknown bytes) is served as an attachment.
 */
export function servesInline(mime: string): boolean {
  if (mime === 'text/plain') return true
  const family = mime.split('/')[0]
  return (family === 'image' && mime !== 'image/svg+xml') || family === 'video' || family === 'audio'
}
