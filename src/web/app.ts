/**
 * The web app (docs/web-client.md): the single-page client built by Vite from web/ into dist/web
 * (`npm install` builds it). `/app` and every `/app/*` path the client routes itself answer
 * index.html (never cached, so a deploy is picked up at once); `/app/assets/*` are the hashed
 * bundles, cached for a year as immutable. The app's documents get their own CSP: scripts,
 * styles, images and connections (the API and the WebSocket) from this origin only, no inline
 * script, no framing.
 */
import fs from 'node:fs'
import path from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'

export const APP_PATH = '/app'

/** dist/web beside the package.json above this file (src/web in development, dist/src/web built) */
export function webDistDir(from = import.meta.dirname): string {
  let dir = from
  for (let i = 0; i < 6; i++) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', 'web')
    dir = path.dirname(dir)
  }
  return path.resolve(from, '../../dist/web')
}

export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "manifest-src 'self'",
  "worker-src 'self'",
].join('; ')

const IMMUTABLE = 'public, max-age=31536000, immutable'

export const webApp: FastifyPluginAsync<{ distDir?: string }> = async (app, options) => {
  const dist = options.distDir ?? webDistDir()
  const indexFile = path.join(dist, 'index.html')
  const assets = path.join(dist, 'assets')
  const built = fs.existsSync(indexFile)
  if (built && fs.existsSync(assets)) {
    await app.register(fastifyStatic, {
      root: assets,
      prefix: `${APP_PATH}/assets/`,
      decorateReply: false,
      // a route per built file, found at start: anything else under assets/ is the 404 below
      wildcard: false,
      // hashed names: a file's content never changes under its name
      cacheControl: false,
      etag: false,
      lastModified: false,
      index: false,
      dotfiles: 'deny',
      setHeaders: (reply) => void reply.header('cache-control', IMMUTABLE).header('content-security-policy', APP_CSP),
    })
  }
  // read once: index.html changes only with a new build, which comes with a restart
  const index = built ? fs.readFileSync(indexFile) : null

  const sendIndex = async (_request: unknown, reply: FastifyReply) => {
    reply.header('content-security-policy', APP_CSP).header('x-robots-tag', 'noindex')
    if (!index) {
      return reply
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send('The web app is not built: run `npm run build` (or `npm install`), then restart Tern.\n')
    }
    return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(index)
  }
  const schema = { summary: 'The web app (client-side routes answer its index.html)', tags: ['service'], hide: true }
  app.get(APP_PATH, { schema }, sendIndex)
  app.get(`${APP_PATH}/*`, { schema }, async (request, reply) => {
    // a missing bundle under assets/ is a 404, never the page (a stale tab would run HTML as JS)
    if (request.url.startsWith(`${APP_PATH}/assets/`)) {
      return reply.code(404).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send('Not found\n')
    }
    return sendIndex(request, reply)
  })
}
