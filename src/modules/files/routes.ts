/** `/files/*` and `/uploads/*` (docs/api.md): uploads, downloads, chunked and tus resumable uploads. */
import type { Readable } from 'node:stream'
import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import { AppError, notFound, payloadTooLarge, unsupportedMediaType, validationError } from '../../http/errors.js'
import { IdParams } from '../../http/schemas.js'
import * as chunked from './chunked.js'
import { CompleteUploadBody, FileView, SessionParams, StartUploadBody, UploadSessionView } from './schemas.js'
import { sendFile } from './serve.js'
import * as files from './service.js'
import { answerErrorsInEnvelope, createTusServer, handOver, TUS_PATH } from './tus.js'

const tags = ['files']
const secured = { tags, security: [{ bearer: [] }] }
const multipartLimits = { fileSize: Number.MAX_SAFE_INTEGER, files: 1, fields: 4, fieldSize: 256, parts: 5 }

/**
 * A multipart request's single file part, named `name`. Not multipart: 415 (400 with no body at
 * all). A body busboy cannot parse (no boundary, a broken part header, cut short) is the client's
 * fault: 400, here or, for what is found while the file streams, in `receive`.
 */
async function filePart(request: FastifyRequest, name: string) {
  if (!request.isMultipart()) {
    const message = `Send multipart/form-data with a "${name}" part`
    throw request.headers['content-type'] ? unsupportedMediaType(message) : validationError(message)
  }
  let part: Awaited<ReturnType<FastifyRequest['file']>>
  try {
    part = await request.file({ limits: multipartLimits, throwFileSizeLimit: false })
  } catch (error) {
    throw malformed(error)
  }
  if (!part || part.fieldname !== name) throw validationError(`The multipart body needs a "${name}" file part`)
  return part
}

/** A multipart parse failure as the client's error (a 4xx from @fastify/multipart keeps its status). */
function malformed(error: unknown) {
  if (error instanceof AppError) return error
  const status = (error as { statusCode?: number }).statusCode
  if (status === 413) return payloadTooLarge('Too many parts in the multipart body')
  if (status !== undefined && status >= 500) return error
  return validationError(`Malformed multipart body: ${error instanceof Error ? error.message : 'cannot be parsed'}`)
}

/** A plain field that came before the file part. */
function field(fields: Record<string, unknown>, name: string): string {
  const value = Object.hasOwn(fields, name) ? (fields[name] as { type?: string; value?: unknown }) : undefined
  if (value?.type !== 'field' || typeof value.value !== 'string')
    throw validationError(`${name} is required (a field before the "chunk" part)`)
  return value.value
}

/**
 * Runs the work that reads an upload's stream. A client that drops the connection mid-upload is not
 * a server error (and hears nothing back); neither is a body that turns out malformed on the way.
 */
async function receive<T>(request: FastifyRequest, file: Readable, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    // the service's own refusals (over the cap…) stand; a stream it aborted for them is no parse error
    if (error instanceof AppError) throw error
    if (request.raw.destroyed && !request.raw.complete) throw validationError('The upload was interrupted before its end')
    // the part's stream failed on its own: busboy met a body it could not parse (cut short…)
    if (file.errored) throw malformed(file.errored)
    throw error
  }
}

/** how long a refused upload's connection keeps reading (and dropping) what the client still sends */
const LINGER_MS = 5000

/**
 * An upload refused mid-stream is answered at once, and the connection closed: the rest of the
 * body is never stored. Closed gently (a "lingering close", as nginx does): Node would destroy the
 * socket as soon as the answer is written, and the client's next bytes would meet a reset that can
 * discard the answer before the client reads it (it sees EPIPE or ECONNRESET, not the 413). So the
 * server sends its FIN after the answer and reads and drops the rest until the client closes too,
 * for at most LINGER_MS.
 */
async function closeAfterRefusedUpload(request: FastifyRequest, reply: FastifyReply) {
  if (reply.statusCode < 400 || request.raw.complete) return
  reply.header('connection', 'close')
  const socket = request.raw.socket
  // Node ends a `connection: close` response with socket.destroySoon(): this socket lingers instead.
  socket.destroySoon = () => {
    socket.end()
    socket.resume()
    socket.once('end', () => socket.destroy())
    setTimeout(() => socket.destroy(), LINGER_MS).unref()
  }
}

export const fileRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  await app.register(multipart)
  app.addHook('onSend', closeAfterRefusedUpload)
  const user = requireUser(ctx)
  const tus = createTusServer(ctx)

  app.post(
    '/files/upload',
    {
      schema: {
        summary: 'Upload a file (multipart, part "file")',
        ...secured,
        consumes: ['multipart/form-data'],
        description: 'multipart/form-data with a `file` part',
        response: { 200: okSchema(FileView) },
      },
      preValidation: user,
    },
    async (request) => {
      const part = await filePart(request, 'file')
      return ok(await receive(request, part.file, () => files.upload(ctx, request.user, part.file, part.filename)))
    },
  )

  app.get(
    '/files/:id',
    {
      schema: {
        summary: 'Download a file I uploaded or that was sent in one of my chats',
        ...secured,
        params: IdParams,
        description: 'the bytes: uploader or a member of a chat where the file was sent',
      },
      preValidation: user,
    },
    async (request, reply) =>
      sendFile(ctx, request, reply, await files.readable(ctx, request.user, request.params.id), 'private, no-cache'),
  )

  app.post(
    '/uploads/multipart',
    {
      schema: {
        summary: 'Start a chunked upload (JSON), or append a chunk (multipart)',
        ...secured,
        description:
          'JSON `{file_name, size, mime_type}` starts a session; multipart fields `session_id`, `offset` then a `chunk` part append',
        body: { content: { 'application/json': { schema: StartUploadBody }, 'multipart/form-data': { schema: {} } } },
        response: { 200: okSchema(UploadSessionView) },
      },
      preValidation: user,
    },
    async (request) => {
      if (!request.isMultipart()) {
        // the JSON start (validated by the body schema); with no body at all, nothing to validate
        if (request.body === undefined || request.body === null)
          throw validationError(
            'Send JSON {file_name, size, mime_type} to start an upload, or multipart/form-data with session_id, offset and a chunk part',
          )
        return ok(await chunked.start(ctx, request.user, request.body as StartUploadBody))
      }
      const part = await filePart(request, 'chunk')
      const offset = field(part.fields, 'offset')
      if (!/^\d{1,15}$/.test(offset)) throw validationError('offset must be a non-negative integer')
      const sessionId = field(part.fields, 'session_id')
      return ok(await receive(request, part.file, () => chunked.receiveChunk(ctx, request.user, sessionId, Number(offset), part.file)))
    },
  )

  app.get(
    '/uploads/multipart/:session_id',
    {
      schema: {
        summary: 'How much of a chunked upload has arrived',
        ...secured,
        params: SessionParams,
        response: { 200: okSchema(UploadSessionView) },
      },
      preValidation: user,
    },
    async (request) => ok(await chunked.status(ctx, request.user, request.params.session_id)),
  )

  app.post(
    '/uploads/complete',
    {
      schema: {
        summary: 'Finish a chunked upload and get the file',
        ...secured,
        body: CompleteUploadBody,
        response: { 200: okSchema(FileView) },
      },
      preValidation: user,
    },
    async (request) => ok(await chunked.complete(ctx, request.user, request.body.session_id, request.body.hash)),
  )

  app.get(
    '/uploads/tus/:id/file',
    {
      schema: {
        summary: 'The file a finished tus upload became',
        ...secured,
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: okSchema(FileView) },
      },
      preValidation: user,
    },
    async (request) => {
      const file = await files.finished(ctx, request.user, `tus:${request.params.id}`)
      if (!file) throw notFound('No finished tus upload with this id')
      return ok(file)
    },
  )

  const toTus = async (request: FastifyRequest, reply: FastifyReply) => {
    handOver(request.raw, request.user)
    // a hijacked reply skips Fastify's sending: the security headers go onto the raw response here
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value)
    answerErrorsInEnvelope(reply.raw)
    reply.hijack()
    await tus.handle(request.raw, reply.raw).catch((err) => {
      request.log.error({ err }, 'tus request failed')
      reply.raw.destroy()
    })
  }
  await app.register(async (tusScope) => {
    // tus bodies stay streams for the tus server to read (only here: elsewhere this type is a 415)
    tusScope.addContentTypeParser('application/offset+octet-stream', (_request, _payload, done) => done(null))
    for (const url of [TUS_PATH, `${TUS_PATH}/*`]) {
      tusScope.route({ method: ['POST', 'HEAD', 'PATCH', 'DELETE'], url, schema: { hide: true }, preValidation: user, handler: toTus })
      tusScope.route({ method: 'OPTIONS', url, schema: { hide: true }, handler: toTus })
    }
  })

  app.get(
    '/uploads/*',
    {
      schema: {
        summary: 'An uploaded file or thumbnail by its path (no login: the path is the permission)',
        tags,
        description: 'an uploaded file (or its thumbnail) by its path; the random path is the permission',
      },
    },
    async (request, reply) => {
      const path = (request.params as { '*': string })['*']
      return sendFile(ctx, request, reply, await files.served(ctx, path), 'private, max-age=31536000, immutable')
    },
  )
}
