/**
 * The app's one way to the API: same-origin fetch with the session cookie (the app never holds a
 * bearer token), the CSRF token in `X-CSRF-Token` on every non-GET request, the envelope
 * unwrapped. A 401 anywhere means the session is gone: the app goes to /login. Other failures
 * become an ApiError whose message the app shows as it is.
 *
 * A small typed wrapper of its own, so the app does not wait for the generated client (client/);
 * its call sites name the endpoint and the answer's type, which is what that client checks.
 */
import type { Envelope, Session } from './types'

export const V2 = '/api.v2/api'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

let csrfToken = ''
export const setCsrfToken = (token: string) => void (csrfToken = token)
export const csrfHeader = (): Record<string, string> => (csrfToken ? { 'X-CSRF-Token': csrfToken } : {})

let leaving = false
/** Leaves for the login page (once), coming back to where the person was. */
export function goToLogin() {
  if (leaving) return
  leaving = true
  const next = location.pathname + location.search
  location.assign(`/login?next=${encodeURIComponent(next)}`)
}

/** goToLogin, and the caller's request ends in an ApiError (its handler shows nothing more). */
export function toLogin(): never {
  goToLogin()
  throw new ApiError(401, 'unauthorized', 'Signed out')
}

type Query = Record<string, string | number | boolean | undefined | null>

function withQuery(path: string, query?: Query): string {
  if (!query) return path
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null) params.set(key, String(value))
  const text = params.toString()
  return text ? `${path}?${text}` : path
}

export async function request<T>(method: string, path: string, options: { query?: Query; body?: unknown } = {}): Promise<Envelope<T>> {
  const headers: Record<string, string> = { Accept: 'application/json' }
  if (method !== 'GET' && method !== 'HEAD') Object.assign(headers, csrfHeader())
  if (options.body !== undefined) headers['Content-Type'] = 'application/json'
  let response: Response
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    })
  } catch {
    throw new ApiError(0, 'network', 'No connection to the server. Check your network and try again.')
  }
  if (response.status === 401) toLogin()
  let body: Envelope<T> | null = null
  try {
    body = (await response.json()) as Envelope<T>
  } catch {
    body = null
  }
  if (!response.ok || !body || body.success === false) {
    const message = body?.error?.message ?? `The server answered ${response.status} ${response.statusText}`.trim()
    throw new ApiError(response.status, body?.error?.code ?? 'http_error', message)
  }
  return body
}

/** `data` of a successful answer */
export async function call<T>(method: string, path: string, options: { query?: Query; body?: unknown } = {}): Promise<T> {
  return (await request<T>(method, path, options)).data as T
}

/** `items` of a list answer */
export async function list<T>(path: string, query?: Query): Promise<T[]> {
  return ((await request<T[]>('GET', path, { query })).items ?? []) as T[]
}

export const get = <T>(path: string, query?: Query) => call<T>('GET', path, { query })
export const post = <T>(path: string, body?: unknown) => call<T>('POST', path, { body: body ?? {} })
export const del = <T>(path: string, query?: Query) => call<T>('DELETE', path, { query })

/** The cookie session: who is signed in, and the CSRF token for this session. */
export async function loadSession(): Promise<Session> {
  return call<Session>('GET', '/api/web/session')
}

/** A readable line for any failure. */
export function describe(error: unknown): string {
  if (error instanceof ApiError) return error.message
  if (error instanceof Error) return error.message
  return 'Something went wrong.'
}
