/**
 * Security headers on every response (helmet's defaults plus Tern's CSP), computed once at start
 * and copied onto each reply. Running helmet's middleware per request rebuilt the same dozen
 * headers every time and cost more than a whole small request; the policy never varies by route
 * (file downloads set their own sandbox CSP in their handler, which overrides this one).
 */
import type { FastifyInstance } from 'fastify'
import helmet from 'helmet'

export function securityHeaders(publicBaseUrl: string): Readonly<Record<string, string>> {
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

export function applySecurityHeaders(app: FastifyInstance, publicBaseUrl: string) {
  const headers = securityHeaders(publicBaseUrl)
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers)
    done()
  })
}
