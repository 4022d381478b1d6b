/**
 * The app's one way to the API: `@tern/client` (client/), the typed client generated from the
 * server's own /openapi.json, in cookie mode: same-origin requests with the session cookie (the
 * app never holds a bearer token) and the session's CSRF token in `X-CSRF-Token` on every change.
 * Every path, parameter, body and answer below is checked against the server's schemas by the
 * type-check; `ok` unwraps the envelope. A 401 anywhere means the session is gone: the app goes
 * to /login. Other failures become an ApiError whose message the app shows as it is.
 */
import { createTernClient, type paths, type TernClient } from '@tern/client'

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
const connect = (token?: string): TernClient =>
  createTernClient({
    baseUrl: location.origin,
    auth: { cookie: true, ...(token ? { csrfToken: token } : {}) },
    headers: { Accept: 'application/json' },
  })

/** The typed client; replaced once the session's CSRF token is known (setCsrfToken). */
export let api: TernClient = connect()

export function setCsrfToken(token: string) {
  csrfToken = token
  api = connect(token)
}
/** For requests the typed client cannot make (an upload's progress needs XHR; tus). */
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

/** What openapi-fetch answers: the success body, or the error body, and the response. */
interface Answer<T> {
  data?: T
  error?: unknown
  response: Response
}

/** The successful answer's body (the envelope), or an ApiError with the server's message. */
export async function ok<T>(pending: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>
  try {
    answer = await pending
  } catch {
    throw new ApiError(0, 'network', 'No connection to the server. Check your network and try again.')
  }
  const { response } = answer
  if (response.status === 401) toLogin()
  if (answer.error !== undefined || answer.data === undefined) {
    const failure = (answer.error ?? {}) as { error?: { code?: unknown; message?: unknown } }
    const code = typeof failure.error?.code === 'string' ? failure.error.code : 'http_error'
    const message =
      typeof failure.error?.message === 'string'
        ? failure.error.message
        : `The server answered ${response.status} ${response.statusText}`.trim()
    throw new ApiError(response.status, code, message)
  }
  return answer.data
}

/** `data` of a successful answer */
export const data = async <T extends { data: unknown }>(pending: Promise<Answer<T>>): Promise<T['data']> => (await ok(pending)).data
/** `items` of a list answer */
export const items = async <T extends { items: unknown[] }>(pending: Promise<Answer<T>>): Promise<T['items']> => (await ok(pending)).items

/** The cookie session: who is signed in, and the CSRF token for this session. */
export const loadSession = () => data(api.GET('/api/web/session'))

/** A readable line for any failure. */
export function describe(error: unknown): string {
  if (error instanceof ApiError) return error.message
  if (error instanceof Error) return error.message
  return 'Something went wrong.'
}

// ---- the shapes the app uses, as the server's schemas give them ----

type Method = 'get' | 'post' | 'put' | 'delete'
/** The 200 (or 201) body of an operation. */
export type Answered<P extends keyof paths, M extends Method> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: { content: { 'application/json': infer B } } }
    ? B
    : R extends { 201: { content: { 'application/json': infer B } } }
      ? B
      : never
  : never
