/**
 * Which methods each path answers, for 405 Method Not Allowed with `Allow` (RFC 9110 §15.5.6).
 * Fastify's router only says "no route"; a second router of the same kind (find-my-way) learns every
 * route as it is added and is asked only on that slow path, so a wrong method costs the hot path nothing.
 */
import type { FastifyInstance } from 'fastify'
import Router from 'find-my-way'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

/** Starts recording `app`'s routes (call before any is added); returns the lookup for a concrete path. */
export function recordMethods(app: FastifyInstance): (path: string) => string[] {
  const router = Router({ ignoreTrailingSlash: true })
  app.addHook('onRoute', (route) => {
    // a catch-all (CORS's OPTIONS *) says nothing about which paths exist
    if (route.url === '*' || route.url === '/*') return
    for (const method of [route.method].flat()) {
      if ((METHODS as readonly string[]).includes(method) && !router.hasRoute(method as never, route.url)) {
        router.on(method as never, route.url, () => {})
      }
    }
  })
  return (path) => {
    let decoded: string
    try {
      decoded = decodeURI(path)
    } catch {
      return []
    }
    return METHODS.filter((method) => router.find(method, decoded) !== null)
  }
}
