/**
 * The Idempotency-Key header, one contract wherever a request takes it (a message send, a premium
 * purchase or redemption): a key of 1 to 64 visible ASCII characters names the request for its
 * user. The same request again with the same key answers what the first one did and changes
 * nothing more; the same key with other parameters is 409 `conflict`. On a message send the body's
 * `client_message_id` is the same key and wins over the header.
 */
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { conflict } from './errors.js'

export const IDEMPOTENCY_KEY_MAX = 64

export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_MAX,
  pattern: '^[\\x21-\\x7e]+$',
  errorMessage: `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} visible ASCII characters`,
})

export const IdempotencyHeaders = Type.Object({ 'idempotency-key': Type.Optional(IdempotencyKey) })

/** The request's Idempotency-Key, as the route's header schema let it through. */
export const idempotencyKeyOf = (request: FastifyRequest): string | undefined =>
  (request.headers as { 'idempotency-key'?: string })['idempotency-key']

/** 409: the key was used before for a request with other parameters. */
export const keyReused = (key = 'Idempotency-Key', what = 'request') => conflict(`${key} was already used for a different ${what}`)
