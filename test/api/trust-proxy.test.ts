/**
 * TRUST_PROXY: whom Tern believes about the client's address. Behind an appending proxy the
 * leftmost X-Forwarded-For entry is whatever the client wrote; only the entries the trusted
 * proxies added count. The address is what session lists show and what rate limits key on.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer, type TestServer } from '../harness/server.js'

const LIMITED = { LOGIN_RATE_LIMIT: '2/60' }
const proxied = await startTestServer({ env: { TRUST_PROXY: '1', ...LIMITED } })
const direct = await startTestServer({ env: LIMITED })

/** A password login as a fresh user through `forwardedFor`; returns the status and the session's ip_address. */
async function loginVia(server: TestServer, forwardedFor: string) {
  const [user] = await registerUsers(server, 1)
  const login = await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password }, { headers: { 'x-forwarded-for': forwardedFor } })
  if (login.status !== 200) return { status: login.status, code: login.body?.error?.code, ip: null }
  const list = await server.api.as(login.body.data.session_token).get(`${V2}/sessions`)
  return { status: login.status, code: null, ip: list.body.items.find((s: any) => s.is_current).ip_address as string }
}

test('TRUST_PROXY=1: the address the proxy saw, in session lists and rate limits; the client cannot pick its own', async () => {
  assert.deepEqual(await loginVia(proxied, '6.6.6.6, 1.2.3.4'), { status: 200, code: null, ip: '1.2.3.4' })
  assert.equal((await loginVia(proxied, '6.6.6.6, 1.2.3.4')).status, 200)
  // the limit (2 per minute) is spent for 1.2.3.4, however the client rewrites its own entry
  for (const forged of ['7.7.7.7, 1.2.3.4', '1.2.3.4', '8.8.8.8, 9.9.9.9, 1.2.3.4']) {
    const refused = await loginVia(proxied, forged)
    assert.deepEqual([refused.status, refused.code], [429, 'rate_limited'], forged)
  }
  // control: another client behind the same proxy (the same socket peer) has its own allowance
  assert.deepEqual(await loginVia(proxied, '6.6.6.6, 5.6.7.8'), { status: 200, code: null, ip: '5.6.7.8' })
})

test('without TRUST_PROXY, X-Forwarded-For is ignored: the socket peer is the client', async () => {
  assert.deepEqual(await loginVia(direct, '6.6.6.6, 1.2.3.4'), { status: 200, code: null, ip: '127.0.0.1' })
  assert.equal((await loginVia(direct, '5.5.5.5')).status, 200)
  const refused = await loginVia(direct, '4.4.4.4')
  assert.deepEqual([refused.status, refused.code], [429, 'rate_limited'], 'a new X-Forwarded-For does not escape the limit')
})

test('TRUST_PROXY as addresses: only the listed proxies are believed', async () => {
  const listed = await startTestServer({ env: { TRUST_PROXY: '127.0.0.1' } })
  assert.equal((await loginVia(listed, '6.6.6.6, 1.2.3.4')).ip, '1.2.3.4')
  const chain = await startTestServer({ env: { TRUST_PROXY: '127.0.0.0/8, 1.2.3.0/24' } })
  assert.equal((await loginVia(chain, '6.6.6.6, 1.2.3.4')).ip, '6.6.6.6', 'two trusted proxies: the entry before them')
  const elsewhere = await startTestServer({ env: { TRUST_PROXY: '10.0.0.1' } })
  assert.equal((await loginVia(elsewhere, '6.6.6.6, 1.2.3.4')).ip, '127.0.0.1', 'the peer is no listed proxy')
})
