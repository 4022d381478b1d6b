/**
 * The one error type, and the handlers that turn every failure into the envelope (docs/api.md).
 * Services throw AppError; anything else that escapes is a 500 with a generic message.
 */
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { isUniqueViolation } from '../db/errors.js'

export type ErrorCode =
  | 'validation_error'
  | 'unauthorized'
  | 'forbidden'
  | 'blocked'
  | 'not_found'
  | 'conflict'
  | 'invalid_file'
  | 'payload_too_large'
  | 'rate_limited'
  | 'upstream_timeout'
  | 'premium_required'
  | 'unsupported_media_type'
  | 'method_not_allowed'
  | 'upgrade_required'
  | 'request_timeout'
  | 'mail_unavailable'
  | 'payments_unavailable'
  | 'internal_error'

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    /** extra response headers, e.g. Retry-After */
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'AppError'
  }
}

export const validationError = (message: string) => new AppError(400, 'validation_error', message)
export const unauthorized = (message = 'Authentication required') => new AppError(401, 'unauthorized', message)
export const forbidden = (message = 'Not allowed') => new AppError(403, 'forbidden', message)
export const premiumRequired = (message = 'This needs Tern Premium') => new AppError(403, 'premium_required', message)
export const blocked = (message = 'You are blocked by this user') => new AppError(403, 'blocked', message)
export const notFound = (message = 'Not found') => new AppError(404, 'not_found', message)
export const conflict = (message: string) => new AppError(409, 'conflict', message)
export const invalidFile = (message = 'The referenced file was never uploaded') => new AppError(400, 'invalid_file', message)
export const payloadTooLarge = (message = 'Payload too large') => new AppError(413, 'payload_too_large', message)
export const unsupportedMediaType = (message: string) => new AppError(415, 'unsupported_media_type', message)
export const methodNotAllowed = (allow: readonly string[]) =>
  new AppError(405, 'method_not_allowed', `Method not allowed; this path accepts ${allow.join(', ')}`, { allow: allow.join(', ') })
export const upgradeRequired = (message = 'This endpoint speaks WebSocket: send an Upgrade request') =>
  new AppError(426, 'upgrade_required', message, { upgrade: 'websocket', connection: 'Upgrade' })
export const paymentsUnavailable = (
  message = 'Premium cannot be bought on this server: no payment provider is configured (PAYMENT_PROVIDER)',
) => new AppError(503, 'payments_unavailable', message)
export const mailUnavailable = (message = 'Mail cannot be sent right now; try again later') =>
  new AppError(503, 'mail_unavailable', message)
export const rateLimited = (retryAfterSeconds: number, what = 'Too many requests') =>
  new AppError(429, 'rate_limited', `${what}; retry in ${retryAfterSeconds} s`, {
    'retry-after': String(retryAfterSeconds),
  })
/** rateLimited for a wait in milliseconds (at least a second is said) */
export const rateLimitedFor = (waitMs: number, what?: string) => rateLimited(Math.max(1, Math.ceil(waitMs / 1000)), what)

export function errorBody(code: ErrorCode, message: string) {
  return { success: false as const, error: { code, message } }
}

interface AjvError {
  instancePath: string
  keyword: string
  message?: string
  params: Record<string, unknown>
  parentSchema?: { errorMessage?: string }
}

/** One human-readable sentence naming the field, from Fastify's first validation error. */
export function validationMessage(error: FastifyError): string {
  const first = error.validation?.[0] as AjvError | undefined
  if (!first) return error.message
  if (first.parentSchema?.errorMessage) return first.parentSchema.errorMessage
  const where = error.validationContext === 'querystring' ? 'query' : (error.validationContext ?? 'body')
  const field = first.instancePath.replace(/^\//, '').replaceAll('/', '.')
  if (first.keyword === 'required') {
    const missing = String(first.params.missingProperty)
    return `${field ? `${field}.` : ''}${missing} is required`
  }
  if (!field) return `${where} ${first.message ?? 'is invalid'}`
  return `${field} ${first.message ?? 'is invalid'}`
}

const STATUS_CODES = new Map<number, ErrorCode>([
  [400, 'validation_error'],
  [401, 'unauthorized'],
  [403, 'forbidden'],
  [404, 'not_found'],
  [405, 'method_not_allowed'],
  [409, 'conflict'],
  [413, 'payload_too_large'],
  [415, 'unsupported_media_type'],
  [426, 'upgrade_required'],
  [429, 'rate_limited'],
])

/** The envelope's code for an HTTP error status (400 validation_error … 500 internal_error). */
export const codeForStatus = (status: number): ErrorCode =>
  STATUS_CODES.get(status) ?? (status >= 500 ? 'internal_error' : 'validation_error')

/**
 * A failure as a client outside HTTP is told it (a socket request's error frame): an AppError and
 * a unique violation as errorHandler answers them; anything else is `internal_error`, flagged
 * `unexpected` so that the caller logs it.
 */
export function clientError(error: unknown): { code: ErrorCode; message: string; retryAfter?: number; unexpected?: true } {
  if (error instanceof AppError) {
    const retryAfter = Number(error.headers['retry-after'])
    return { code: error.code, message: error.message, ...(retryAfter > 0 ? { retryAfter } : {}) }
  }
  if (isUniqueViolation(error)) return { code: 'conflict', message: 'Already exists' }
  return { code: 'internal_error', message: 'Internal server error', unexpected: true }
}

export function errorHandler(error: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AppError) {
    reply.headers(error.headers)
    return reply.code(error.statusCode).send(errorBody(error.code, error.message))
  }
  const fastifyError = error as FastifyError
  if (fastifyError.validation) {
    return reply.code(400).send(errorBody('validation_error', validationMessage(fastifyError)))
  }
  if (isUniqueViolation(error)) {
    return reply.code(409).send(errorBody('conflict', 'Already exists'))
  }
  const status = fastifyError.statusCode
  if (status && status >= 400 && status < 500) {
    // Fastify's own client errors (malformed JSON, body too large, bad media type…): their
    // messages are short and safe to show.
    const code = STATUS_CODES.get(status) ?? 'validation_error'
    let message = fastifyError.message
    if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') message = 'Request body is larger than 1 MiB'
    else if (status === 400 && error instanceof SyntaxError) message = `Malformed JSON body: ${error.message}`
    return reply.code(status).send(errorBody(code, message))
  }
  request.log.error({ err: error }, 'unhandled error')
  return reply.code(500).send(errorBody('internal_error', 'Internal server error'))
}

/** The Telegram-compatible Bot API's paths (`/bot<token>/<method>`, modules/bots/bot-api.ts): errors there speak Telegram's envelope. */
const BOT_API_PATH = /^\/+bot/

/** A failure in Telegram's envelope, for what fails on a Bot API path before its routes see it. */
function botApiFailure(reply: FastifyReply, status: number, description: string) {
  return reply.code(status).send({ ok: false, error_code: status, description })
}

/** Fastify's pre-routing errors (FST_ERR_BAD_URL, bad content-type header…) → the envelope. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 400
  const message = error.code === 'FST_ERR_BAD_URL' ? 'The URL is not validly percent-encoded' : 'Bad request'
  if (BOT_API_PATH.test(request.url)) return botApiFailure(reply, status, `Bad Request: ${message}`)
  return reply.code(status).send(errorBody(STATUS_CODES.get(status) ?? 'validation_error', message))
}

/** Malformed HTTP that never becomes a request (oversized headers, garbage): an envelope on the raw socket. */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return requestTimedOut(socket, false)
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW'
  const [status, reason] = tooLarge ? [431, 'Request Header Fields Too Large'] : [400, 'Bad Request']
  rawAnswer(socket, status, reason, errorBody('validation_error', tooLarge ? 'Request headers are too large' : 'Malformed HTTP request'))
}

/**
 * 408 for a request that did not arrive in time (http/timeouts.ts; `upload`: its body paused), and
 * the connection closed once the answer is out: its client has stopped sending.
 */
export function requestTimedOut(socket: Socket, upload: boolean) {
  const message = upload
    ? 'The upload paused for longer than HTTP_REQUEST_TIMEOUT_SECONDS'
    : 'The request did not arrive in full within HTTP_REQUEST_TIMEOUT_SECONDS'
  rawAnswer(socket, 408, 'Request Timeout', errorBody('request_timeout', message), () => socket.destroy())
}

/** An answer written straight onto the socket (no request object exists, or Fastify is still waiting for the body). */
function rawAnswer(socket: Socket, status: number, reason: string, envelope: object, then?: () => void) {
  if (!socket.writable) return socket.destroy()
  const body = JSON.stringify(envelope)
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    then,
  )
}

/**
 * The 404 handler, or 405 with `Allow` when the path exists under other methods: `allowed(path)`
 * names them (empty for a path nothing serves).
 */
export function notFoundHandler(allowed: (path: string) => string[]) {
  return (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]
    if (BOT_API_PATH.test(path)) return botApiFailure(reply, 404, 'Not Found')
    const methods = allowed(path)
    if (methods.length > 0) {
      const error = methodNotAllowed(methods)
      return reply.headers(error.headers).code(405).send(errorBody(error.code, error.message))
    }
    return reply.code(404).send(errorBody('not_found', `No route for ${request.method} ${path}`))
  }
}
