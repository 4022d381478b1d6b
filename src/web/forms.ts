/**
 * Server-rendered forms (the sign-in pages, the admin panel): bodies are
 * application/x-www-form-urlencoded (each route's schema then checks the fields), and every POST
 * passes a guard before validation (so before the schema drops `_csrf`): the browser's own word
 * that the form came from another site (Sec-Fetch-Site), then the CSRF token against its secret
 * (@fastify/csrf-protection, registered by the caller).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { forbidden } from '../http/errors.js'

export function useForms(app: FastifyInstance, crossSiteRefusal: string) {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)))
  })
  app.addHook('preValidation', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    if (request.method !== 'POST') return done()
    const site = request.headers['sec-fetch-site']
    if (site === 'cross-site' || site === 'same-site') return done(forbidden(crossSiteRefusal))
    app.csrfProtection(request, reply, done as never)
  })
}
