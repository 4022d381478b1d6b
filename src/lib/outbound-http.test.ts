import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { outboundRequest, RefusedDestination, refuseUrl, type Resolver } from './outbound-http.js'

let server: http.Server
let port = 0
const hits: string[] = []

before(async () => {
  server = http.createServer((req, res) => {
    hits.push(req.url ?? '')
    if (req.url === '/redirect') return res.writeHead(302, { location: `http://127.0.0.1:${port}/after-redirect` }).end()
    if (req.url === '/silent') return // never answers
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      const chunk = Buffer.alloc(64 * 1024, 1)
      for (let i = 0; i < 32; i++) res.write(chunk)
      return res.end()
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})
after(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const open = { allowPrivate: false, requireHttps: false }
const send = (url: string, policy = open, resolve?: Resolver) =>
  outboundRequest(url, policy, { method: 'POST', body: '{}', timeoutMs: 2000, maxResponseBytes: 1024, ...(resolve ? { resolve } : {}) })

/** Spellings of this machine's loopback (and of other refused addresses) as a URL's host. */
const spellings = [
  '127.0.0.1',
  '127.1',
  '127.0.1',
  '2130706433',
  '0x7f000001',
  '0x7f.0.0.1',
  '0x7f.1',
  '0177.0.0.1',
  '0177.1',
  '017700000001',
  '127.000.000.001',
  '0x7F.0X0.0x0.0X1',
  '0.0.0.0',
  '0',
  '0x0',
  '[::1]',
  '[0:0:0:0:0:0:0:1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[0:0:0:0:0:ffff:127.0.0.1]',
  '[::127.0.0.1]',
  '[::7f00:1]',
  '[::ffff:0:127.0.0.1]',
  '[::ffff:0:7f00:1]',
  '[64:ff9b::127.0.0.1]',
  '[64:ff9b::7f00:1]',
  '[64:ff9b:1::7f00:1]',
  '[2002:7f00:1::1]',
  '[2001::7f00:1]',
  '[::]',
  '[fe80::1]',
  '[fc00::1]',
  '[fd00::1]',
  '[ff02::1]',
  '[::ffff:a9fe:a9fe]',
  '169.254.169.254',
  '0xa9fea9fe',
  '2852039166',
  '10.0.0.1',
  '012.0.0.1',
  '172.16.0.1',
  '192.168.0.1',
  '100.64.0.1',
  '224.0.0.1',
  '255.255.255.255',
  'localhost',
  'LOCALHOST',
  'localhost.',
  'ip6-localhost',
]

test('no spelling of a refused address is reached, and the registration check refuses each', async () => {
  hits.length = 0
  for (const host of spellings) {
    const url = `http://${host}:${port}/refused`
    await assert.rejects(
      send(url),
      (err: Error) => err instanceof RefusedDestination || /ENOTFOUND|EAI_AGAIN/.test(String((err as NodeJS.ErrnoException).code)),
      url,
    )
    assert.notEqual(await refuseUrl(url, open), null, url)
  }
  assert.deepEqual(hits, [], 'nothing reached the listener')
  // positive control: the same listener is reached when private addresses are allowed (tests)
  const answer = await send(`http://127.0.0.1:${port}/allowed`, { allowPrivate: true, requireHttps: false })
  assert.equal(answer.status, 200)
  assert.deepEqual(hits, ['/allowed'])
  assert.equal(await refuseUrl(`http://127.0.0.1:${port}/`, { allowPrivate: true, requireHttps: false }), null)
})

test('the address a connection uses is checked, not the one seen at registration (DNS rebinding)', async () => {
  hits.length = 0
  let calls = 0
  // public when registered, this machine when connected
  const rebinding: Resolver = async () =>
    ++calls === 1 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]
  assert.equal(await refuseUrl(`http://rebind.example:${port}/`, open, rebinding), null)
  await assert.rejects(send(`http://rebind.example:${port}/rebound`, open, rebinding), RefusedDestination)
  assert.ok(calls >= 2, 'the connection resolved the name itself')
  // a name that resolves to both is connected only to its public address (never the private one)
  const mixed: Resolver = async () => [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ]
  await assert.rejects(send(`http://mixed.example:${port}/mixed`, open, mixed), RefusedDestination)
  assert.deepEqual(hits, [])
  // control: the same name, allowed to reach private addresses, connects
  const answer = await send(`http://rebind.example:${port}/control`, { allowPrivate: true, requireHttps: false }, async () => [
    { address: '127.0.0.1', family: 4 },
  ])
  assert.equal(answer.status, 200)
  assert.deepEqual(hits, ['/control'])
})

test('https is required where the policy says so; plain http then only to loopback with private addresses allowed', async () => {
  const strict = { allowPrivate: false, requireHttps: true }
  assert.match((await refuseUrl('http://8.8.8.8/x', strict))!, /https/)
  assert.equal(await refuseUrl('https://8.8.8.8/x', strict), null)
  const testPush = { allowPrivate: true, requireHttps: true, loopbackHttp: true }
  assert.match((await refuseUrl('http://10.0.0.8/x', testPush))!, /https/)
  assert.equal(await refuseUrl(`http://127.0.0.1:${port}/x`, testPush), null)
  assert.equal((await outboundRequest(`http://localhost:${port}/x`, testPush, { timeoutMs: 2000, maxResponseBytes: 64 })).status, 200)
  // without the loopback exception (webhooks in production) plain http is refused even there
  assert.match((await refuseUrl(`http://127.0.0.1:${port}/x`, { allowPrivate: true, requireHttps: true }))!, /https/)
  await assert.rejects(
    outboundRequest(`http://localhost:${port}/x`, { allowPrivate: true, requireHttps: true }, { timeoutMs: 2000, maxResponseBytes: 64 }),
    RefusedDestination,
  )
  await assert.rejects(send('http://8.8.8.8/x', strict), RefusedDestination)
  assert.match((await refuseUrl('ftp://8.8.8.8/x', open))!, /https/)
  assert.match((await refuseUrl('https://user:pw@8.8.8.8/x', open))!, /credentials/)
  assert.match((await refuseUrl('nonsense', open))!, /not a URL/)
  assert.match((await refuseUrl('https://name.invalid/x', open))!, /resolve/)
})

test('a redirect is not followed, a silent receiver times out, a long answer is cut at the cap', async () => {
  hits.length = 0
  const test = { allowPrivate: true, requireHttps: false }
  const redirected = await send(`http://127.0.0.1:${port}/redirect`, test)
  assert.equal(redirected.status, 302)
  const started = Date.now()
  await assert.rejects(
    outboundRequest(`http://127.0.0.1:${port}/silent`, test, { timeoutMs: 300, maxResponseBytes: 1024 }),
    (err: Error) => err.name === 'TimeoutError' || err.name === 'AbortError',
  )
  assert.ok(Date.now() - started < 1500, 'bounded in time')
  const big = await outboundRequest(`http://127.0.0.1:${port}/big`, test, { method: 'GET', timeoutMs: 2000, maxResponseBytes: 1000 })
  assert.equal(big.truncated, true)
  assert.equal(big.body.length, 1000)
  const small = await send(`http://127.0.0.1:${port}/small`, test)
  assert.equal(small.truncated, false)
  assert.equal(small.body.toString(), '{"ok":true}')
  assert.deepEqual(hits, ['/redirect', '/silent', '/big', '/small'], 'the redirect target was never asked for')
})
