/**
 * The tus 1.0 resumable-upload protocol at `/uploads/tus` (@tus/server with @tus/file-store), so
 * tus-js-client, Uppy and other standard clients work unchanged. Fastify authenticates the request
 * (Bearer) and hands the raw request over; an upload belongs to its creator (stored in its
 * metadata) and its size is held to the creator's cap. When the last byte arrives the upload becomes
 * a normal file: the final response carries `Tern-File-Id` and `Tern-File-Path`, and
 * `GET /uploads/tus/{id}/file` finds it later. The tus copy is removed once the response is out.
 *
 * tus writes through its own file store into the `tus/` area of the uploads directory; a deployment
 * on object storage would swap in @tus/s3-store here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import path from 'node:path'
import { FileStore } from '@tus/file-store'
import { EVENTS, Server, type Upload } from '@tus/server'
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { AppError, codeForStatus, errorBody } from '../../http/errors.js'
import { capFor, upload as storeUpload } from './service.js'

export const TUS_PATH = '/uploads/tus'
const OWNER = 'tern_owner'

/** The authenticated user of each request handed to tus (set by the Fastify route). */
const callers = new WeakMap<IncomingMessage, UserRow>()

export function handOver(raw: IncomingMessage, user: UserRow | null) {
  if (user) callers.set(raw, user)
}

function callerOf(req: Request): UserRow | undefined {
  const raw = (req as unknown as { runtime?: { node?: { req: IncomingMessage } } }).runtime?.node?.req
  return raw ? callers.get(raw) : undefined
}

const notFound = { status_code: 404, body: 'Upload not found\n' }

/** Where tus keeps unfinished uploads; they expire UPLOAD_SESSION_TTL_SECONDS after they began. */
function tusStore(ctx: AppContext) {
  return new FileStore({
    directory: path.join(ctx.config.uploadDir, 'tus'),
    expirationPeriodInMilliseconds: ctx.config.uploadSessionTtlSeconds * 1000,
  })
}

/** Removes the tus uploads that expired unfinished; how many. */
export function sweepExpiredTus(ctx: AppContext): Promise<number> {
  return tusStore(ctx).deleteExpired()
}

export function createTusServer(ctx: AppContext): Server {
  const store = tusStore(ctx)
  const server: Server = new Server({
    path: TUS_PATH,
    datastore: store,
    relativeLocation: true,
    respectForwardedHeaders: ctx.config.trustProxy !== false,
    // Same origins as the rest of the API (none by default).
    allowedOrigins: ctx.config.corsOrigins.includes('*') ? undefined : ctx.config.corsOrigins,
    exposedHeaders: ['Tern-File-Id', 'Tern-File-Path'],
    maxSize: (req) => {
      const user = callerOf(req)
      return user ? capFor(ctx, user) : ctx.config.maxUploadBytes
    },
    async onUploadCreate(req, upload) {
      return { metadata: { ...upload.metadata, [OWNER]: String(callerOf(req)!.id) } }
    },
    async onIncomingRequest(req, id) {
      if (req.method === 'POST' || req.method === 'OPTIONS') return
      const upload = await store.getUpload(id).catch(() => null)
      if (upload && upload.metadata?.[OWNER] !== String(callerOf(req)?.id)) throw notFound
    },
    // tus's error answers in Tern's envelope (its routes set the JSON content type on them)
    onResponseError(_req, err) {
      const status = 'status_code' in err ? err.status_code : 500
      if (status >= 500) ctx.log.error({ err }, 'tus request failed')
      const message = status >= 500 ? 'Internal server error' : ('body' in err ? err.body : err.message).trim()
      return { status_code: status, body: JSON.stringify(errorBody(codeForStatus(status), message)) }
    },
    async onUploadFinish(req, upload) {
      const file = await finish(ctx, callerOf(req)!, upload)
      return { headers: { 'Tern-File-Id': String(file.id), 'Tern-File-Path': file.path } }
    },
  })
  server.on(EVENTS.POST_FINISH, (_req, _res, upload) => {
    store.remove(upload.id).catch((err) => ctx.log.warn({ err, upload: upload.id }, 'could not remove a finished tus upload'))
  })
  return server
}

/** Streams the finished tus upload into an ordinary file (hashed, deduplicated, thumbnailed). */
async function finish(ctx: AppContext, user: UserRow, upload: Upload) {
  const opened = await ctx.storage.open(`tus/${upload.id}`)
  if (!opened) throw notFound
  try {
    const name = upload.metadata?.filename ?? upload.metadata?.name ?? undefined
    return await storeUpload(ctx, user, opened.stream, name, `tus:${upload.id}`)
  } catch (error) {
    if (error instanceof AppError) throw { status_code: error.statusCode, body: `${error.message}\n` }
    throw error
  }
}

/** writeHead's headers (an object, [name, value] pairs or a flat list) without these names. */
function without(headers: object, names: Set<string>): object {
  const drop = (name: unknown) => typeof name === 'string' && names.has(name.toLowerCase())
  if (!Array.isArray(headers)) return Object.fromEntries(Object.entries(headers).filter(([name]) => !drop(name)))
  if (headers.every((entry) => Array.isArray(entry))) return headers.filter(([name]) => !drop(name))
  const flat: unknown[] = []
  for (let i = 0; i + 1 < headers.length; i += 2) if (!drop(headers[i])) flat.push(headers[i], headers[i + 1])
  return flat
}

const BODY_HEADERS = new Set(['content-type', 'content-length'])

/**
 * Every error tus answers goes out as Tern's JSON envelope. Most pass through onResponseError
 * (createTusServer), but tus writes some itself (a missing Tus-Resumable, an invalid header) as
 * plain text: those are rewrapped on the way out, and the length is counted again.
 */
export function answerErrorsInEnvelope(raw: ServerResponse) {
  let failedWith = 0
  const writeHead = raw.writeHead.bind(raw) as (status: number, ...rest: unknown[]) => ServerResponse
  raw.writeHead = ((status: number, ...rest: unknown[]) => {
    if (status < 400) return writeHead(status, ...rest)
    failedWith = status
    raw.setHeader('content-type', 'application/json; charset=utf-8')
    raw.removeHeader('content-length')
    return writeHead(status, ...rest.map((arg) => (typeof arg === 'object' && arg !== null ? without(arg, BODY_HEADERS) : arg)))
  }) as ServerResponse['writeHead']
  // an error's body is small: held until the end, then sent as the envelope unless it is one
  const held: Buffer[] = []
  const hold = (chunk: unknown) => {
    if (typeof chunk === 'string' || chunk instanceof Uint8Array) held.push(Buffer.from(chunk))
  }
  const write = raw.write.bind(raw) as (...args: unknown[]) => boolean
  raw.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!failedWith) return write(chunk, ...rest)
    hold(chunk)
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined
    if (callback) process.nextTick(callback)
    return true
  }) as ServerResponse['write']
  const end = raw.end.bind(raw) as (...args: unknown[]) => ServerResponse
  raw.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (!failedWith) return end(chunk, ...rest)
    if (typeof chunk === 'function') rest.unshift(chunk)
    else hold(chunk)
    const text = Buffer.concat(held).toString()
    const body = text.startsWith('{') ? text : JSON.stringify(errorBody(codeForStatus(failedWith), text.trim() || 'Request refused'))
    return end(body, ...rest.filter((arg) => typeof arg === 'function'))
  }) as ServerResponse['end']
}
