/**
 * @tern/client: the Tern API, typed from the server's own schemas.
 *
 * - `createTernClient` is openapi-fetch over `schema.d.ts` (generated from /openapi.json): every
 *   path, parameter, body and answer is typed. It signs requests with a bearer token, or, in a
 *   browser page served by Tern, with the `tern_session` cookie plus the session's CSRF token
 *   (fetched once from GET /api/web/session and sent as X-CSRF-Token on every change).
 * - `connectGateway` (gateway.ts) opens the real-time socket; its frames are typed from
 *   /asyncapi.json (`events.d.ts`).
 */
import createFetchClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch'
import type { paths } from './schema.js'

export type { components, operations, paths } from './schema.js'
export type * from './events.js'
export {
  connectGateway,
  GatewayRequestError,
  type Gateway,
  type GatewayOptions,
  type RequestData,
  type RequestType,
  type WebSocketLike,
} from './gateway.js'

/** How requests are signed: a bearer token, or the browser's session cookie with its CSRF token. */
export type TernAuth = { bearer: string } | { cookie: true; csrfToken?: string }

export interface TernClientOptions {
  /** where Tern is, e.g. https://tern.example (in a page served by Tern: location.origin) */
  baseUrl: string
  auth?: TernAuth
  /** another fetch (tests, a custom agent) */
  fetch?: ClientOptions['fetch']
  /** headers for every request */
  headers?: Record<string, string>
}

export type TernClient = Client<paths> & {
  /** cookie mode: the CSRF token in use (fetched on first need), or null */
  csrfToken(): Promise<string | null>
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

export function createTernClient(options: TernClientOptions): TernClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '')
  const client = createFetchClient<paths>({
    baseUrl,
    fetch: options.fetch,
    headers: options.headers,
    credentials: options.auth && 'cookie' in options.auth ? 'same-origin' : 'omit',
  })
  const auth = options.auth
  let csrf: Promise<string | null> | null = auth && 'cookie' in auth && auth.csrfToken ? Promise.resolve(auth.csrfToken) : null
  const csrfToken = async (): Promise<string | null> => {
    if (!auth || !('cookie' in auth)) return null
    csrf ??= client.GET('/api/web/session').then(({ data }) => data?.data.csrf_token ?? null)
    const token = await csrf
    if (token === null) csrf = null
    return token
  }
  const signing: Middleware = {
    async onRequest({ request }) {
      if (!auth) return request
      if ('bearer' in auth) {
        request.headers.set('authorization', `Bearer ${auth.bearer}`)
        return request
      }
      if (SAFE.has(request.method) || new URL(request.url).pathname === '/api/web/session') return request
      const token = await csrfToken()
      if (token) request.headers.set('x-csrf-token', token)
      return request
    },
  }
  client.use(signing)
  return Object.assign(client, { csrfToken })
}
