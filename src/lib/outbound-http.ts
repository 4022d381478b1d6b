/**
 * The one HTTP client for requests leaving Tern: to URLs a client chose (Web Push endpoints, bot
 * webhooks) and to services the operator configured (FCM, APNs, the OpenID Connect provider, the
 * video service: the CONFIGURED policy). No other file opens an outgoing HTTP connection
 * (test/structure/outbound.test.ts checks it). For a URL a client chose, it resolves the host itself and checks the address each connection actually uses (inside the
 * connection's own DNS lookup, so a name that resolved to a public address when it was registered
 * and to a private one later — DNS rebinding — is still refused), refuses every address
 * lib/public-address.ts does not call public unless `allowPrivate` (WEBHOOK_ALLOW_PRIVATE, tests),
 * follows no redirect (a 3xx is the caller's answer), and bounds the whole exchange in time and
 * the answer in size.
 */
import dns from 'node:dns'
import http from 'node:http'
import http2 from 'node:http2'
import https from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { isLoopbackAddress, isPublicAddress } from './public-address.js'

export interface OutboundPolicy {
  /** loopback, private and reserved addresses too (tests only) */
  allowPrivate: boolean
  /** https only */
  requireHttps: boolean
  /** with requireHttps: plain http to loopback is still allowed when allowPrivate is (a test push service) */
  loopbackHttp?: boolean
}

/** A service the operator configured (FCM, APNs, the OpenID provider, the video service): its address is trusted, http allowed. */
export const CONFIGURED: OutboundPolicy = { allowPrivate: true, requireHttps: false }

/** What a lookup answers: every address of a name (dns.lookup's `all: true` form). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true })

/** `[host]` of a URL without its brackets (an IPv6 literal). */
const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, '')

/** A refused destination: the request never left. */
export class RefusedDestination extends Error {
  readonly code = 'EREFUSEDDESTINATION'
}

/** Why a URL's form is refused (scheme, credentials), or null; addresses are checked apart. */
function refuseForm(url: URL, policy: OutboundPolicy, addresses: string[] | null): string | null {
  if (url.username || url.password) return 'must not carry credentials'
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL'
  if (url.protocol === 'http:' && policy.requireHttps) {
    const loopbackOnly = addresses !== null && addresses.length > 0 && addresses.every(isLoopbackAddress)
    if (!(policy.loopbackHttp && policy.allowPrivate && loopbackOnly)) return 'must be an https URL'
  }
  return null
}

/**
 * Why a URL may not be the target of outgoing requests, or null when it may: its form (above),
 * and every address its host resolves to public unless `allowPrivate`. A name that does not
 * resolve is refused. Checked when the URL is registered; each request checks again.
 */
export async function refuseUrl(raw: string, policy: OutboundPolicy, resolve: Resolver = systemResolver): Promise<string | null> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'is not a URL'
  }
  const early = refuseForm(url, { ...policy, requireHttps: false }, null)
  if (early) return early
  const host = bare(url.hostname)
  let addresses: string[]
  try {
    addresses = isIP(host) ? [host] : (await resolve(host)).map((entry) => entry.address)
  } catch {
    return 'has a host name that does not resolve'
  }
  if (addresses.length === 0) return 'has a host name that does not resolve'
  const form = refuseForm(url, policy, addresses)
  if (form) return form
  if (!policy.allowPrivate && !addresses.every(isPublicAddress)) return 'points to a private, loopback or link-local address'
  return null
}

/** A `lookup` for net/http that keeps only the addresses the policy allows; none left is an error. */
export function guardedLookup(allowPrivate: boolean, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (list) => {
        const wanted = options.family === 4 || options.family === 6 ? list.filter((entry) => entry.family === options.family) : list
        const usable = allowPrivate ? wanted : wanted.filter((entry) => isPublicAddress(entry.address))
        if (usable.length === 0)
          return callback(new RefusedDestination(`${hostname} resolves only to private, loopback or link-local addresses`), '', 0)
        if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable)
        callback(null, usable[0].address, usable[0].family)
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    )
  }
}

export interface OutboundRequest {
  method?: string
  headers?: Record<string, string | number>
  body?: string | Buffer | null
  /** the whole exchange: connection, request, answer */
  timeoutMs: number
  /** the most of an answer's body that is read; past it the connection is dropped and `truncated` is set */
  maxResponseBytes: number
  /** kept-alive agents (one per kind of deployment, not per request) */
  agents?: { http: http.Agent; https: https.Agent }
  /** how names are resolved (tests: a resolver that answers differently at each call) */
  resolve?: Resolver
  /** aborts the exchange early (beside timeoutMs) */
  signal?: AbortSignal
}

export interface OutboundResponse {
  status: number
  headers: http.IncomingHttpHeaders
  /** at most maxResponseBytes of the answer */
  body: Buffer
  truncated: boolean
}

/**
 * Sends one request to a URL a client chose. Rejects with RefusedDestination when the URL or
 * the address the connection would use is refused (nothing was sent), or with the network error
 * (a TimeoutError after timeoutMs).
 */
export function outboundRequest(raw: string, policy: OutboundPolicy, request: OutboundRequest): Promise<OutboundResponse> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Promise.reject(new RefusedDestination('the URL is not a URL'))
  }
  const host = bare(url.hostname)
  const literal = isIP(host) ? [host] : null
  const form = refuseForm(url, policy, literal)
  // a name's http is decided once its addresses are known: http only to loopback (tests)
  if (
    form &&
    !(literal === null && url.protocol === 'http:' && policy.loopbackHttp && policy.allowPrivate && !url.username && !url.password)
  ) {
    return Promise.reject(new RefusedDestination(`the URL ${form}`))
  }
  // an IP literal never goes through the lookup: it is checked here
  if (literal && !policy.allowPrivate && !isPublicAddress(host)) {
    return Promise.reject(new RefusedDestination('the URL points to a private, loopback or link-local address'))
  }
  const secure = url.protocol === 'https:'
  const resolve = request.resolve ?? systemResolver
  // plain http to a name (tests): only where every address it resolves to is loopback
  const lookup: LookupFunction =
    !secure && policy.requireHttps && literal === null
      ? (hostname, options, callback) => {
          resolve(hostname).then(
            (list) => {
              const loopback = list.filter((entry) => isLoopbackAddress(entry.address))
              if (loopback.length === 0 || loopback.length !== list.length)
                return callback(new RefusedDestination('plain http is for loopback only'), '', 0)
              guardedLookup(policy.allowPrivate, async () => loopback)(hostname, options, callback)
            },
            (err: NodeJS.ErrnoException) => callback(err, '', 0),
          )
        }
      : guardedLookup(policy.allowPrivate, resolve)
  return new Promise<OutboundResponse>((resolvePromise, reject) => {
    const signal = request.signal
      ? AbortSignal.any([AbortSignal.timeout(request.timeoutMs), request.signal])
      : AbortSignal.timeout(request.timeoutMs)
    const req = (secure ? https : http).request(
      url,
      {
        method: request.method ?? 'POST',
        headers: request.headers,
        agent: request.agents ? (secure ? request.agents.https : request.agents.http) : undefined,
        lookup,
        signal,
      },
      (response) => {
        const chunks: Buffer[] = []
        let size = 0
        let truncated = false
        const finish = () =>
          resolvePromise({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks), truncated })
        response.on('data', (chunk: Buffer) => {
          if (truncated) return
          if (size + chunk.length > request.maxResponseBytes) {
            chunks.push(chunk.subarray(0, request.maxResponseBytes - size))
            size = request.maxResponseBytes
            truncated = true
            // the rest is not wanted: the connection goes, not back to the pool
            response.destroy()
            finish()
            return
          }
          size += chunk.length
          chunks.push(chunk)
        })
        response.on('end', finish)
        response.on('error', (err) => (truncated ? undefined : reject(err)))
      },
    )
    req.on('error', reject)
    req.end(request.body ?? undefined)
  })
}

/** Kept-alive agents, for a caller that posts to the same receivers often (no new handshake per request). */
export function keptAliveAgents(maxSockets = 32): { http: http.Agent; https: https.Agent } {
  return { http: new http.Agent({ keepAlive: true, maxSockets }), https: new https.Agent({ keepAlive: true, maxSockets }) }
}

/** how long a fetch through outboundFetch may take, unless its signal says sooner */
const FETCH_TIMEOUT_MS = 30_000
/** the most of an answer outboundFetch reads */
const FETCH_MAX_BYTES = 8 * 1024 * 1024

/**
 * fetch's shape over outboundRequest, under a policy: for the callers and libraries that speak
 * fetch (openid-client takes it as its customFetch). No redirect is followed (a 3xx is the answer).
 */
export interface FetchInit {
  method?: string
  headers?: HeadersInit
  /** a stream is refused (nothing Tern sends needs one) */
  body?: string | URLSearchParams | ArrayBuffer | ArrayBufferView | ReadableStream | null
  signal?: AbortSignal | null
  /** never followed, whatever is asked */
  redirect?: string
}

export function outboundFetcher(policy: OutboundPolicy, options: { timeoutMs?: number; maxResponseBytes?: number } = {}) {
  return async (input: string | URL | Request, init: FetchInit = {}): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    const headers: Record<string, string> = {}
    new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined)).forEach((value, name) => {
      headers[name] = value
    })
    let body: string | Buffer | null = null
    const given = init.body ?? null
    if (typeof given === 'string') body = given
    else if (given instanceof URLSearchParams) {
      body = given.toString()
      headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8'
    } else if (given instanceof ArrayBuffer || ArrayBuffer.isView(given)) body = Buffer.from(given as ArrayBuffer)
    else if (given !== null) throw new TypeError('outboundFetch takes a string, URLSearchParams or bytes as its body')
    if (body !== null) headers['content-length'] = String(Buffer.byteLength(body))
    const answer = await outboundRequest(url, policy, {
      method: init.method ?? (input instanceof Request ? input.method : 'GET'),
      headers,
      body,
      timeoutMs: options.timeoutMs ?? FETCH_TIMEOUT_MS,
      maxResponseBytes: options.maxResponseBytes ?? FETCH_MAX_BYTES,
      signal: init.signal ?? undefined,
    })
    const responseHeaders = new Headers()
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue
      for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, one)
    }
    const empty = answer.status === 204 || answer.status === 304 || (init.method ?? 'GET').toUpperCase() === 'HEAD'
    return new Response(empty ? null : new Uint8Array(answer.body), { status: answer.status, headers: responseHeaders })
  }
}

/** An HTTP/2 session to a service the operator configured (APNs): unref'd, closed after `idleMs` without a stream. */
export function outboundHttp2(origin: string, idleMs: number): http2.ClientHttp2Session {
  const session = http2.connect(origin)
  session.unref()
  session.setTimeout(idleMs, () => session.close())
  return session
}
