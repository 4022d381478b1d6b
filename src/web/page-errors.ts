/**
 * What a server-rendered page says when a request fails (the sign-in pages and the admin panel):
 * the status and a message a person can act on. Expected refusals (AppError, a form whose CSRF
 * token is missing or stale, a bad field, a duplicate) keep their status; anything else is a 500
 * whose error is logged and never shown.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { isUniqueViolation } from '../db/errors.js'
import { AppError, validationMessage } from '../http/errors.js'

const CSRF_FAILURES = new Set(['FST_CSRF_INVALID_TOKEN', 'FST_CSRF_MISSING_SECRET'])

export function pageError(
  error: FastifyError | AppError,
  request: FastifyRequest,
  reply: FastifyReply,
  /** whose forms these are, in the words of the stale-form message ("this site", "this panel") */
  forms: string,
): { status: number; message: string } {
  if (error instanceof AppError) {
    reply.headers(error.headers)
    return { status: error.statusCode, message: error.message }
  }
  if (CSRF_FAILURES.has(error.code)) {
    return { status: 403, message: `This form has expired or did not come from ${forms}. Go back, reload the page and try again.` }
  }
  if (error.validation) return { status: 400, message: validationMessage(error) }
  if (isUniqueViolation(error)) return { status: 409, message: 'That already exists.' }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return { status: error.statusCode, message: error.message }
  request.log.error({ err: error }, 'page error')
  return { status: 500, message: 'Something went wrong; the error was logged. Try again in a moment.' }
}
