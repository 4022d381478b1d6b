/**
 * The OpenAPI document (/openapi.json, /docs), made to validate and to feed code generators: every
 * operation gets an operationId from its method and path, its error answers in the envelope, and an
 * explicit security (none for public routes); keywords that only Tern's validator reads
 * (`errorMessage`) are left out.
 */
import type { SwaggerOptions } from '@fastify/swagger'
import { ErrorResponse } from './envelope.js'

/** The V2 mount, left out of operation ids (the V3 mount, the same routes again, is hidden). */
const V2 = '/api.v2/api'

/** `post /api.v2/api/messages/:id/edit` → `postMessagesByIdEdit` */
export function operationId(method: string, url: string): string {
  const path = url.startsWith(`${V2}/`) ? url.slice(V2.length) : url
  const words = path
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => (segment.startsWith(':') ? ['by', segment.slice(1)] : segment === '*' ? ['path'] : [segment]))
    .flatMap((word) => word.split(/[^A-Za-z0-9]+/).filter(Boolean))
  return method.toLowerCase() + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('')
}

const error = (description: string) => ({ description, content: { 'application/json': { schema: ErrorResponse } } })

/** Removes the keywords only Tern's validator reads (JSON Schema allows them, OpenAPI 3.0 does not). */
function withoutPrivateKeywords(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutPrivateKeywords)
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) if (key !== 'errorMessage') out[key] = withoutPrivateKeywords(inner)
  return out
}

/**
 * A request field with a default is one the client may leave out (the validator fills it in), so
 * the document does not list it as required: generated clients then make it optional. Request
 * schemas only (query strings and bodies); nested objects too.
 */
function defaultsOptional(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(defaultsOptional)
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) out[key] = defaultsOptional(inner)
  const properties = out.properties as Record<string, { default?: unknown }> | undefined
  if (Array.isArray(out.required) && properties && typeof properties === 'object') {
    const required = (out.required as unknown[]).filter(
      (name) => typeof name !== 'string' || !Object.hasOwn(properties, name) || properties[name]?.default === undefined,
    )
    if (required.length) out.required = required
    else delete out.required
  }
  return out
}

const bytes = (description: string) => ({
  description,
  content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
})

/** Answers Fastify does not serialize (files, a redirect, a page), so their routes declare no response schema: by path, or by `METHOD path`. */
const UNSERIALIZED = new Map<string, Record<string, unknown>>([
  ['/files/:id', { 200: bytes('The file'), 206: bytes('The requested byte range'), 304: { description: 'Not modified (If-None-Match)' } }],
  [
    '/uploads/*',
    { 200: bytes('The file or thumbnail'), 206: bytes('The requested byte range'), 304: { description: 'Not modified (If-None-Match)' } },
  ],
  [
    'GET /logout',
    {
      200: {
        description: 'The sign-out page (text/html), a button that posts here',
        content: { 'text/html': { schema: { type: 'string' } } },
      },
      302: { description: 'Not signed in: to the landing page' },
    },
  ],
  [
    'POST /logout',
    {
      303: { description: 'Signed out, the session cookie cleared; to the landing page' },
      403: error('A cross-site post, or a missing or stale CSRF token (forbidden)'),
    },
  ],
])

type Transform = NonNullable<Extract<SwaggerOptions, { transform?: unknown }>['transform']>

export const transform: Transform = ({ schema, url, route }) => {
  // The V3 mount repeats V2 exactly; documenting it twice would only add noise.
  if (url.startsWith('/api.v3/') || (schema as { hide?: boolean } | undefined)?.hide)
    return { schema: { ...schema, hide: true } as typeof schema, url }
  const method = [route.method].flat()[0] as string
  const s = (schema ?? {}) as Record<string, unknown>
  const secured = Array.isArray(s.security) && s.security.length > 0
  const responses: Record<string, unknown> = {
    ...(UNSERIALIZED.get(`${method} ${url}`) ?? UNSERIALIZED.get(url)),
    ...(s.response as Record<string, unknown> | undefined),
  }
  if (s.body || s.querystring || s.params || s.consumes)
    responses[400] ??= error('The request is invalid (validation_error), or its body is of a type this route does not take (415)')
  if (secured) {
    responses[401] ??= error('No valid session (unauthorized)')
    responses[403] ??= error('Not allowed (forbidden)')
  }
  if (url.includes(':') || url.includes('*') || s.querystring || s.body)
    responses[404] ??= error('Not found, or not visible to the caller (not_found)')
  responses[500] ??= error('Something failed on the server (internal_error); nothing more is said')
  // a wildcard path is one parameter, named: `/uploads/{path}`
  const wildcard = url.endsWith('/*')
  if (wildcard) responses[404] ??= error('Not found (not_found)')
  return {
    schema: withoutPrivateKeywords({
      ...s,
      ...(s.querystring ? { querystring: defaultsOptional(s.querystring) } : {}),
      ...(s.body ? { body: defaultsOptional(s.body) } : {}),
      ...(wildcard
        ? {
            params: {
              type: 'object',
              properties: { path: { type: 'string', description: 'the file’s path as uploads return it' } },
              required: ['path'],
            },
          }
        : {}),
      // a route mounted twice outside V2 and inside it names its V2 copy itself
      operationId: typeof s.operationId === 'string' ? s.operationId : operationId(method, url),
      security: secured ? s.security : [],
      response: responses,
    }) as typeof schema,
    url: wildcard ? `${url.slice(0, -1)}{path}` : url,
  }
}
