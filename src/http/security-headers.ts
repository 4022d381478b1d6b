/**
 * Security headers, computed once at start and copied onto each reply (running helmet's
 * middleware per request rebuilt the same headers every time and cost more than a whole small
 * request). Two sets:
 * - Pages (the web pages, Swagger UI at /docs, file downloads) get helmet's defaults plus Tern's
 *   CSP: the headers that govern what a document may load, embed and be embedded by.
 * - Everything else is a JSON API response and gets the set the OWASP REST Security Cheat Sheet
 *   names for one: a CSP that allows nothing and no framing, no framing for older browsers
 *   (X-Frame-Options), no MIME sniffing, same-origin resource policy, and HSTS. Helmet's other
 *   headers (COOP, Origin-Agent-Cluster, Referrer-Policy, X-DNS-Prefetch-Control,
 *   X-Download-Options, X-Permitted-Cross-Domain-Policies, X-XSS-Protection) act only on
 *   documents or on retired clients, and each header costs every response a name and value check.
 */
import type { FastifyInstance } from 'fastify'
import helmet from 'helmet'

export function pageHeaders(publicBaseUrl: string): Readonly<Record<string, string>> {
  const middleware = helmet({
    contentSecurityPolicy: {
      directives: {
        // Swagger UI (at /docs) loads its own scripts and styles from this origin only.
        'img-src': ["'self'", 'data:', 'validator.swagger.io'],
        'script-src': ["'self'"],
        // Upgrading to https only makes sense where https is served; on a plain-http LAN host the
        // browser would rewrite every same-origin URL to a port that speaks no TLS.
        'upgrade-insecure-requests': publicBaseUrl.startsWith('https:') ? [] : null,
      },
    },
  })
  const headers: Record<string, string> = {}
  const response = {
    setHeader: (name: string, value: string | number) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  }
  let failure: unknown = null
  middleware({} as never, response as never, (error?: unknown) => void (failure = error ?? null))
  if (failure) throw failure
  return Object.freeze(headers)
}

export function apiHeaders(publicBaseUrl: string): Readonly<Record<string, string>> {
  const page = pageHeaders(publicBaseUrl)
  return Object.freeze({
    // answers carry tokens and private data: no cache keeps them (file downloads set their own)
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'cross-origin-resource-policy': page['cross-origin-resource-policy'],
    'strict-transport-security': page['strict-transport-security'],
    'x-content-type-options': page['x-content-type-options'],
    'x-frame-options': 'DENY',
  })
}

function addHeaders(app: FastifyInstance, headers: Readonly<Record<string, string>>) {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers)
    done()
  })
}

/** The API set on every response. */
export function applySecurityHeaders(app: FastifyInstance, publicBaseUrl: string) {
  addHeaders(app, apiHeaders(publicBaseUrl))
}

/** The page set on every response of `scope` (an encapsulated plugin), over the API set. */
export function usePageHeaders(scope: FastifyInstance, publicBaseUrl: string) {
  addHeaders(scope, pageHeaders(publicBaseUrl))
}
