/**
 * Request validation. Bodies are JSON, so they are checked strictly (a number where a string is
 * expected is an error, not converted); query strings and path params arrive as text and are
 * coerced to the schema's types. Both drop unknown properties of closed objects
 * (`additionalProperties: false`), so they are never stored.
 */
import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify'

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
  ajv.addKeyword('errorMessage')
  return ajv
}

const strict = build({ coerceTypes: false })
const coercing = build({ coerceTypes: 'array' })

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile(schema)

/** preValidation: a POST whose body fields are all optional may be sent with no body at all. */
export async function emptyBodyAsObject(request: FastifyRequest): Promise<void> {
  request.body ??= {}
}
