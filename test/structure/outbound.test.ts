/**
 * One outgoing HTTP client: no file of src/ but lib/outbound-http.ts opens an HTTP connection of
 * its own (fetch, node:http(s) requests or agents, HTTP/2 sessions), so every request that leaves
 * Tern goes through its address checks and bounds. Read from the source. The video service
 * (src/video/, its own process in production) and the browser scripts (src/web/, run in the
 * browser) are not Tern's server.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import test from 'node:test'

const src = path.resolve(import.meta.dirname, '../../src')
const OWNER = 'lib/outbound-http.ts'
const OUTSIDE = (file: string) => file.startsWith('video/') || file.startsWith('web/')

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sources(full)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : []
  })
}

/** Ways to open an outgoing HTTP connection: the global fetch, http(s).request/get, an Agent, http2.connect. */
const OPENS = [
  /(?<![\w.])fetch\s*\(/,
  /\bhttps?\s*\.\s*(?:request|get)\s*\(/,
  /\bnew\s+https?\s*\.\s*Agent\s*\(/,
  /\bhttp2\s*\.\s*connect\s*\(/,
  /from\s+'undici'/,
]

/** a file that names something of its own `fetch` (a parameter or a constant) calls that, not the global */
const OWN_FETCH = /(?:\b(?:const|let|function)\s+fetch\b|[(,]\s*fetch\s*:)/

function opens(text: string): boolean {
  const code = text.replace(/^\s*(?:\/\/|\*).*$/gm, '')
  return OPENS.some((pattern, i) => (i === 0 && OWN_FETCH.test(code) ? false : pattern.test(code)))
}

const files = sources(src).map((file) => ({
  file: path.relative(src, file).split(path.sep).join('/'),
  text: fs.readFileSync(file, 'utf8'),
}))

test('the patterns find an outgoing connection where there is one (positive control)', () => {
  assert.ok(opens("const res = await fetch('https://example.org')"))
  assert.ok(opens('https.request(url, options)'))
  assert.ok(opens('const agent = new http.Agent({ keepAlive: true })'))
  assert.ok(opens('const session = http2.connect(origin)'))
  assert.equal(opens("const page = await fetchPage(after)\n// fetch('x') in a comment\nvideoFetch(url)"), false)
  assert.equal(opens('function walk(fetch: () => Promise<void>) { return fetch() }'), false, 'a parameter named fetch')
  assert.ok(opens(files.find(({ file }) => file === OWNER)!.text), 'the client itself opens connections')
})

test('no file but lib/outbound-http.ts opens an outgoing HTTP connection', () => {
  const others = files.filter(({ file, text }) => file !== OWNER && !OUTSIDE(file) && opens(text)).map(({ file }) => file)
  assert.deepEqual(others, [])
})
