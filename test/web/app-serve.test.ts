/**
 * The web app as Tern serves it (src/web/app.ts), over plain HTTP: /app and its client-side routes
 * answer index.html with no-cache and the app's CSP (no inline script allowed, none in the page),
 * the hashed bundles are cached for a year as immutable, a missing bundle is a 404 (never the
 * page), and the first load's JavaScript stays under 150 KB gzip.
 */
import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import test from 'node:test'
import { startTestServer } from '../harness/server.js'

const server = await startTestServer()

const get = (path: string) => fetch(server.url + path, { redirect: 'manual' })

test('/app and its client-side routes answer the page: no-cache, the app CSP, no inline script', async () => {
  for (const path of ['/app', '/app/', '/app/chat/12', '/app/chat/12/info', '/app/search', '/app/anything/else']) {
    const res = await get(path)
    assert.equal(res.status, 200, path)
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/, path)
    assert.equal(res.headers.get('cache-control'), 'no-cache', path)
    const csp = res.headers.get('content-security-policy') ?? ''
    assert.match(csp, /script-src 'self'(;|$)/, path)
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, path)
    assert.match(csp, /connect-src 'self'/)
    assert.match(csp, /frame-ancestors 'none'/)
    const html = await res.text()
    assert.match(html, /<script type="module" crossorigin src="\/app\/assets\/[\w-]+\.js"><\/script>/)
    // every <script> has a src: nothing inline for the CSP to refuse
    for (const tag of html.match(/<script\b[^>]*>[\s\S]*?<\/script>/g) ?? []) assert.match(tag, /\bsrc="/, tag)
    assert.doesNotMatch(html, /https?:\/\//, 'no third-party URL in the page')
  }
})

test('hashed assets are cached for a year as immutable; a missing one is 404, not the page', async () => {
  const html = await (await get('/app')).text()
  const assets = [...html.matchAll(/(?:src|href)="(\/app\/assets\/[^"]+)"/g)].map((m) => m[1])
  assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), assets.join(' '))
  for (const asset of assets) {
    const res = await get(asset)
    assert.equal(res.status, 200, asset)
    assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable', asset)
    assert.match(res.headers.get('content-type') ?? '', asset.endsWith('.js') ? /javascript/ : /text\/css/)
    const body = await res.text()
    assert.doesNotMatch(body, /https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\//i, `${asset} names no third-party host`)
  }
  const missing = await get('/app/assets/index-doesnotexist.js')
  assert.equal(missing.status, 404)
  assert.doesNotMatch(await missing.text(), /<html/i)
})

test('the first load is under 150 KB of gzipped JavaScript', async () => {
  const html = await (await get('/app')).text()
  const scripts = [
    ...html.matchAll(/<script[^>]+src="([^"]+\.js)"/g),
    ...html.matchAll(/<link rel="modulepreload"[^>]+href="([^"]+\.js)"/g),
  ].map((m) => m[1])
  assert.ok(scripts.length >= 1)
  let total = 0
  for (const src of scripts) total += gzipSync(Buffer.from(await (await get(src)).arrayBuffer()), { level: 9 }).length
  assert.ok(total > 5_000, `the bundle is real: ${total} bytes`)
  assert.ok(total < 150 * 1024, `first-load JS is ${(total / 1024).toFixed(1)} KB gzip`)
})
