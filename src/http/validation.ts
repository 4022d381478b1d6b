/**
 * Request validation. Bodies are JSON, so they are checked strictly (a number where a string is
 * expected is an error, not converted); query strings and path params arrive as text and are
 * coerced to the schema's types. Both drop unknown properties of closed objects
 * (`additionalProperties: false`), so they are never stored.
 */
import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyError, FastifyRequest, FastifySchemaCompiler } from 'fastify'
import { parseInstant } from '../lib/time.js'
import { validationError, validationMessage } from './errors.js'

function build(options: Options): Ajv {
  const ajv = new Ajv({
    removeAdditional: true,
    useDefaults: true,
    allErrors: false,
    // keep the schema on each error so `errorMessage` can replace Ajv's wording (http/errors.ts)
    verbose: true,
    strict: false,
    ...options,
  })
  addFormats.default(ajv)
  // ajv-formats' date-time lets through what names no instant (a leap second, February 30), which
  // later parses to NaN: a timestamp must be one parseInstant accepts.
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => parseInstant(text) !== null })
  ajv.addKeyword('errorMessage')
  return ajv
}

/**
 * A string PostgreSQL could not store (U+0000) or that is not Unicode (a lone surrogate): refused in
 * every request the same way on both databases, rather than stored by SQLite and failing on PostgreSQL.
 * So is a number no database integer or JavaScript number holds exactly (beyond ±2^53).
 */
function badText(value: unknown, path: string): string | null {
  // with the u flag a surrogate pair is one code point: \p{Cs} matches only a lone surrogate
  if (typeof value === 'string') return /[\0\p{Cs}]/u.test(value) ? path : null
  if (typeof value === 'number') return Math.abs(value) > Number.MAX_SAFE_INTEGER ? path : null
  if (typeof value !== 'object' || value === null) return null
  for (const key of Object.keys(value)) {
    const found = badText(key, path) ?? badText((value as Record<string, unknown>)[key], path ? `${path}.${key}` : key)
    if (found !== null) return found
  }
  return null
}

/** A validation error naming the field, in the shape errorHandler reads from Ajv's. */
function fieldError(
  field: string,
  where: string,
  message = 'contains a NUL character or invalid Unicode (a lone surrogate), or a number beyond ±2^53',
) {
  const error = new Error(`${field || where} ${message}`) as Error & { validation: unknown[]; validationContext: string }
  error.validation = [{ instancePath: field ? `/${field.replaceAll('.', '/')}` : '', keyword: 'text', message, params: {} }]
  error.validationContext = where
  return error
}

/** The integer-typed top-level fields of a query or params schema (they are flat objects). */
function integerFields(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {}
  return Object.keys(properties).filter((name) => properties[name]?.type === 'integer')
}

const strict = build({ coerceTypes: false })
const coercing = build({ coerceTypes: 'array' })

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const validate = (httpPart === 'body' ? strict : coercing).compile(schema)
  const where = httpPart === 'querystring' ? 'query' : (httpPart ?? 'body')
  // Ajv coerces query and path text with Number(): '0x10', '1e2' and ' 7' would pass as integers
  const integers = httpPart === 'body' ? [] : integerFields(schema)
  const check = (data: unknown, options?: object) => {
    for (const name of integers) {
      const raw = (data as Record<string, unknown> | null)?.[name]
      if (typeof raw === 'string' && !(/^-?\d{1,16}$/.test(raw) && Number.isSafeInteger(Number(raw)))) {
        return { error: fieldError(name, where, 'must be an integer (decimal digits, below 2^53)') }
      }
    }
    if (!validate(data, options as never)) return false
    const field = badText(data, '')
    return field === null ? true : { error: fieldError(field, where) }
  }
  // Fastify hands Ajv's own functions the parent (so Ajv may replace the root value) and reads
  // `errors` after a false: the wrapper passes both through.
  return Object.defineProperties(check, {
    schemaEnv: { value: validate.schemaEnv },
    errors: { get: () => validate.errors },
  })
}

/** preValidation: a POST whose body fields are all optional may be sent with no body at all. */
export async function emptyBodyAsObject(request: FastifyRequest): Promise<void> {
  request.body ??= {}
}

/**
 * A JSON body that arrives outside HTTP (a socket request's `data`), checked as a request body is:
 * the same strict rules, defaults and dropped unknown fields, and the same 400 `validation_error`
 * sentence. Returns the (cleaned) value or throws.
 */
export function bodyValidator<T>(schema: object): (data: unknown) => T {
  const check = validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: '' }) as ((
    data: unknown,
  ) => boolean | { error: Error }) & { errors: unknown[] | null }
  return (data) => {
    const result = check(data)
    if (result === true) return data as T
    const error =
      result === false
        ? Object.assign(new Error('invalid data'), { validation: check.errors ?? [], validationContext: 'data' })
        : result.error
    throw validationError(validationMessage(error as FastifyError))
  }
}
