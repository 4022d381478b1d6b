/**
 * The Telegram-compatible Bot API at `/bot<token>/<method>`, outside Tern's envelope:
 * Telegram's `{ok: true, result}` and `{ok: false, error_code, description}`. Bodies may be JSON,
 * urlencoded or multipart (their fields; files arrive with sendPhoto/sendDocument), with query
 * parameters beside them. The token is in the path: the request log masks it (http/request-log.ts).
 */
import multipart from '@fastify/multipart'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AppContext } from '../../context.js'
import { METHODS } from './bot-methods.js'
import { badRequest, BotApiError, InputFile, Params } from './bot-params.js'
import { authenticateToken } from './service.js'
import { downloadable } from './chat-methods.js'
import { sendFile } from '../files/index.js'
import * as files from '../files/index.js'
import { stopPolling } from './updates.js'

const MAX_FIELDS = 64
const MAX_FIELD_BYTES = 64 * 1024
/** a file a bot uploads (sendPhoto, sendDocument): Telegram's 50 MB, or MAX_UPLOAD_BYTES if lower */
const MAX_BOT_FILE_BYTES = 50 * 1024 * 1024

function failure(reply: FastifyReply, error: BotApiError) {
  return reply.code(error.errorCode).send({
    ok: false,
    error_code: error.errorCode,
    description: error.description,
    ...(error.parameters ? { parameters: error.parameters } : {}),
  })
}

function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof BotApiError) return failure(reply, error)
  const status = (error as FastifyError).statusCode
  if (status === 413) return failure(reply, new BotApiError(413, 'Request Entity Too Large'))
  if (status === 415) return failure(reply, badRequest('unsupported Content-Type: send JSON, urlencoded or multipart/form-data'))
  if (status && status >= 400 && status < 500)
    return failure(reply, badRequest(error instanceof SyntaxError ? "can't parse JSON" : error.message))
  request.log.error({ err: error }, 'bot api: unhandled error')
  return failure(reply, new BotApiError(500, 'Internal Server Error'))
}

/** The fields of a multipart body (file parts are read and kept for the file-taking methods). */
async function multipartFields(request: FastifyRequest, maxFileBytes: number): Promise<Map<string, unknown>> {
  const fields = new Map<string, unknown>()
  try {
    for await (const part of request.parts({
      limits: { fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, files: 2, fileSize: maxFileBytes, parts: MAX_FIELDS + 2 },
    })) {
      if (part.type === 'file') {
        const data = await part.toBuffer()
        if (part.file.truncated) throw new BotApiError(413, 'Request Entity Too Large')
        fields.set(part.fieldname, new InputFile(data, part.filename))
      } else fields.set(part.fieldname, part.value)
    }
  } catch (error) {
    if ((error as FastifyError | null)?.code === 'FST_REQ_FILE_TOO_LARGE')
      throw new BotApiError(413, 'Request Entity Too Large: the file is too big')
    throw error instanceof BotApiError
      ? error
      : badRequest(`malformed multipart body: ${error instanceof Error ? error.message : 'cannot be parsed'}`)
  }
  return fields
}

export async function botApiRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  await app.register(multipart)
  // Telegram's clients post `{}`-less calls too: an empty JSON body is no parameters, not an error
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = (body as string).trim()
    if (text === '') return done(null, new Map())
    try {
      done(null, JSON.parse(text))
    } catch {
      done(badRequest("can't parse JSON"), undefined)
    }
  })
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, new Map(new URLSearchParams(body as string)))
  })
  app.setErrorHandler(errorHandler)

  app.addHook('preClose', async () => stopPolling(ctx))

  const notFound = async (_request: FastifyRequest, reply: FastifyReply) => failure(reply, new BotApiError(404, 'Not Found'))

  app.route<{ Params: { token: string; method: string } }>({
    method: ['GET', 'POST'],
    url: '/bot:token/:method',
    schema: { hide: true },
    handler: async (request, reply) => {
      const bot = await authenticateToken(ctx, request.params.token)
      if (!bot) return failure(reply, new BotApiError(401, 'Unauthorized'))
      const method = METHODS.get(request.params.method.toLowerCase())
      if (!method) return failure(reply, new BotApiError(404, 'Not Found'))
      const body = request.isMultipart()
        ? await multipartFields(request, Math.min(ctx.config.maxUploadBytes, MAX_BOT_FILE_BYTES))
        : request.body
      if (Array.isArray(body) || (body !== undefined && body !== null && typeof body !== 'object'))
        throw badRequest('the body must be a JSON object')
      const aborted = new AbortController()
      reply.raw.on('close', () => aborted.abort())
      const result = await method({ ctx, bot, params: Params.from(request.query, body), signal: aborted.signal })
      return reply.send({ ok: true, result })
    },
  })
  // a file the bot may read (getFile's file_path), downloaded as from Telegram's /file/bot<token>/<file_path>
  app.route<{ Params: { token: string; '*': string } }>({
    method: ['GET', 'HEAD'],
    url: '/file/bot:token/*',
    schema: { hide: true },
    handler: async (request, reply) => {
      const bot = await authenticateToken(ctx, request.params.token)
      if (!bot) return failure(reply, new BotApiError(401, 'Unauthorized'))
      const path = request.params['*']
      const upload = await downloadable(ctx, bot.bot_id, path)
      const file = upload ? await files.served(ctx, upload.path).catch(() => null) : null
      if (!file) return failure(reply, new BotApiError(404, 'Not Found'))
      return sendFile(ctx, request, reply, file, 'private, max-age=3600')
    },
  })
  app.route({ method: ['GET', 'POST'], url: '/bot:token', schema: { hide: true }, handler: notFound })
  app.route({ method: ['GET', 'POST'], url: '/bot:token/*', schema: { hide: true }, handler: notFound })
}
