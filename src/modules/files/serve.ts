/**
 * Sending stored bytes over HTTP: ETag / If-None-Match (304), one `Range` (206, or 416 when it
 * cannot be satisfied), cache headers, and the rules that keep uploaded content passive on this
 * origin: `nosniff`, a sandboxing CSP, and `attachment` for anything but media and plain text.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AppContext } from '../../context.js'
import { AppError, notFound } from '../../http/errors.js'
import type { ByteRange } from '../../storage/storage.js'
import { servesInline } from './detect.js'
import type { Servable } from './service.js'

/** The one range a `Range` header asks for; null to send everything (absent, multiple or malformed). */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null
  if (!match || (match[1] === '' && match[2] === '')) return null
  if (match[1] === '') {
    // suffix: the last N bytes
    const length = Number(match[2])
    if (length === 0 || size === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - length), end: size - 1 }
  }
  const start = Number(match[1])
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1)
  if (match[2] !== '' && Number(match[2]) < start) return null
  return start >= size ? 'unsatisfiable' : { start, end }
}

/** `filename` (ASCII fallback) and `filename*` (UTF-8, RFC 8187) for Content-Disposition. */
function disposition(kind: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%]/g, '_')
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false
  return header.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t === etag || t === `W/${etag}`
  })
}

export async function sendFile(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, file: Servable, cacheControl: string) {
  const etag = `"${file.etag}"`
  const headers = { etag, 'cache-control': cacheControl, 'x-content-type-options': 'nosniff' }
  if (matchesEtag(request.headers['if-none-match'], etag)) return reply.code(304).headers(headers).send()

  const ifRange = request.headers['if-range']
  const range = ifRange === undefined || ifRange === etag ? parseRange(request.headers.range, file.size) : null
  if (range === 'unsatisfiable') {
    throw new AppError(416, 'validation_error', `Range not satisfiable: the file has ${file.size} bytes`, {
      'content-range': `bytes */${file.size}`,
    })
  }
  const opened = await ctx.storage.open(file.key, range ?? undefined)
  if (!opened) {
    request.log.warn({ key: file.key }, 'stored object is missing')
    throw notFound('File not found')
  }

  reply
    .headers(headers)
    .header('accept-ranges', 'bytes')
    .header('content-type', file.mime_type === 'text/plain' ? 'text/plain; charset=utf-8' : file.mime_type)
    .header('content-disposition', disposition(servesInline(file.mime_type) ? 'inline' : 'attachment', file.file_name))
    // even if a browser is talked into rendering it, uploaded content runs no script and loads nothing
    .header('content-security-policy', "default-src 'none'; sandbox")
    // media is embedded by web clients on other origins (CORS_ORIGINS); the path itself is the secret
    .header('cross-origin-resource-policy', 'cross-origin')
  if (range) {
    reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${file.size}`)
      .header('content-length', range.end - range.start + 1)
  } else {
    reply.header('content-length', file.size)
  }
  return reply.send(opened.stream)
}
