/**
 * The HTTP layer against hostile or careless clients: a wrong method (405 + Allow), caching of
 * answers that carry tokens, CORS preflights, X-Forwarded-For from whom it is trusted, a body that
 * never finishes, timestamps that name no instant, text PostgreSQL cannot store, and integers that
 * are not integers.
 */
import assert from 'node:assert/strict'
import net from 'node:net'
import { test } from 'node:test'
import { createGroup } from '../harness/fixtures.js'
import { assertError } from '../harness/assert.js'
import { registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'

const server = await startTestServer({ env: { CORS_ORIGINS: 'https://app.example', HTTP_REQUEST_TIMEOUT_SECONDS: '1' } })

test('a wrong method on an existing path is 405 method_not_allowed with Allow; an unknown path stays 404', async () => {
  const [alice] = await registerUsers(server, 1)
  const wrong = await alice.api.get(`${V2}/messages/send`)
  assertError(wrong, 405, 'method_not_allowed', 'GET messages/send')
  // POST, and whatever else the router would take this path to (DELETE messages/{id}, CORS's OPTIONS)
  const allow = wrong.headers.get('allow')!.split(', ')
  assert.ok(allow.includes('POST') && !allow.includes('GET'), allow.join())
  const sessions = await alice.api.post(`${V2}/sessions`, {})
  assertError(sessions, 405, 'method_not_allowed', 'POST sessions')
  assert.deepEqual(
    sessions.headers
      .get('allow')!
      .split(', ')
      .filter((m) => m !== 'OPTIONS'),
    ['GET', 'HEAD'],
  )
  const param = await alice.api.post(`${V2}/sessions/12`, {})
  assertError(param, 405, 'method_not_allowed', 'POST sessions/{id}')
  assert.deepEqual(
    param.headers
      .get('allow')!
      .split(', ')
      .filter((m) => m !== 'OPTIONS'),
    ['DELETE'],
  )
  assertError(await alice.api.get(`${V2}/no/such/thing`), 404, 'not_found', 'unknown path')
  assertError(await alice.api.get(`${V2}/%E0%A4%A`), 400, 'validation_error', 'bad encoding')
})

test('JSON answers are never cached (they carry tokens); file downloads keep their own caching', async () => {
  const res = await server.api.post(`${V2}/auth/register`, { username: `nc_${Date.now() % 1e9}`, password: 'correct horse battery' })
  assert.equal(res.status, 201)
  assert.equal(res.headers.get('cache-control'), 'no-store')
  assert.equal((await server.api.get('/health')).headers.get('cache-control'), 'no-store')
  assert.equal((await server.api.get(`${V2}/nothing`)).headers.get('cache-control'), 'no-store')
})

test('with CORS_ORIGINS, the preflight allows every method the API uses, DELETE included', async () => {
  for (const method of ['DELETE', 'POST', 'PATCH', 'PUT']) {
    const res = await fetch(`${server.url}${V2}/sessions/1`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': method,
        'access-control-request-headers': 'authorization, content-type',
      },
    })
    assert.equal(res.status, 204, method)
    assert.ok(
      res.headers
        .get('access-control-allow-methods')!
        .split(',')
        .map((m) => m.trim())
        .includes(method),
      method,
    )
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example')
  }
  // control: another origin gets no grant
  const other = await fetch(`${server.url}${V2}/sessions/1`, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'DELETE' },
  })
  assert.equal(other.headers.get('access-control-allow-origin'), null)
})

test('TRUST_PROXY=1 takes the address the nearest proxy saw, not the one the client wrote; off, the header is ignored', async () => {
  const proxied = await startTestServer({ env: { TRUST_PROXY: '1' } })
  const direct = await startTestServer()
  for (const [on, expected] of [
    [proxied, '1.2.3.4'],
    [direct, '127.0.0.1'],
  ] as const) {
    const [user] = await registerUsers(on, 1)
    const login = await on.api.post(
      `${V2}/auth/login`,
      { login: user.username, password: user.password },
      { headers: { 'x-forwarded-for': '6.6.6.6, 1.2.3.4' } },
    )
    assert.equal(login.status, 200)
    const list = await on.api.as(login.body.data.session_token).get(`${V2}/sessions`)
    const current = list.body.items.find((s: any) => s.is_current)
    assert.equal(current.ip_address, expected)
  }
})

test('a body that stalls is answered 408 within HTTP_REQUEST_TIMEOUT_SECONDS; a WebSocket outlives it', async () => {
  const [alice] = await registerUsers(server, 1)
  const socket = await TestSocket.connect(server.url, alice.token)
  const { port } = new URL(server.url)
  const started = Date.now()
  const answer = await new Promise<string>((resolve, reject) => {
    const client = net.connect(Number(port), '127.0.0.1', () => {
      client.write(
        `POST ${V2}/messages/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${alice.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"recei`,
      )
    })
    let text = ''
    client.on('data', (chunk) => (text += chunk))
    client.on('close', () => resolve(text))
    client.on('error', reject)
    setTimeout(() => client.destroy(), 8000)
  })
  const took = Date.now() - started
  assert.match(answer, /^HTTP\/1\.1 408/, answer)
  assert.match(answer, /"request_timeout"/)
  assert.ok(took < 4000, `answered after ${took} ms`)
  // the socket opened before is still there and alive
  socket.send({ type: 'ping' })
  await socket.next('pong')
  assert.equal(socket.closed, null)
})

test('timestamps that name no instant are 400; real ones work', async () => {
  const [owner, friend] = await registerUsers(server, 2)
  const group = await createGroup(owner, { title: 'Times' })
  for (const expires_at of ['2016-12-31T23:59:60Z', '2027-02-30T00:00:00Z', '2027-01-01T24:00:00Z', '2027-01-01T00:00:00+25:00']) {
    assertError(
      await owner.api.post(`${V2}/groups/invite-link/create`, { chat_id: group.group_id, expires_at }),
      400,
      'validation_error',
      expires_at,
    )
    assertError(
      await owner.api.post(`${V2}/messages/send`, { receiver_id: friend.id, content: 'later', scheduled_at: expires_at }),
      400,
      'validation_error',
      `scheduled ${expires_at}`,
    )
  }
  const link = await owner.api.post(`${V2}/groups/invite-link/create`, { chat_id: group.group_id, expires_at: '2099-12-31T23:59:59Z' })
  assert.equal(link.status, 200, link.text)
  assert.equal(link.body.data.expires_at, '2099-12-31T23:59:59.000Z')
})

test('text with U+0000 or a lone surrogate is refused on every dialect, naming the field; emoji pass', async () => {
  const [alice, bob] = await registerUsers(server, 2)
  for (const content of ['a\u0000b', 'half \ud83d', 'back \ude00 wards']) {
    const res = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content })
    assertError(res, 400, 'validation_error', JSON.stringify(content))
    assert.match(res.body.error.message, /^content /)
  }
  assertError(await alice.api.post(`${V2}/groups/create`, { title: 'bad\u0000title' }), 400, 'validation_error', 'title')
  assertError(await alice.api.get(`${V2}/chat/history`, { query: { chat_id: '1\u0000' } }), 400, 'validation_error', 'query')
  const ok = await alice.api.post(`${V2}/messages/send`, { receiver_id: bob.id, content: 'fine 😀 👩‍👩‍👧 🇫🇷' })
  assert.equal(ok.status, 200, ok.text)
  assert.equal(ok.body.data.content, 'fine 😀 👩‍👩‍👧 🇫🇷')
})

test('integers in queries are real integers: no Infinity, nothing from 2^53 up', async () => {
  const [alice] = await registerUsers(server, 1)
  for (const page of ['1e400', '9007199254740993', 'Infinity', '-1', '1.5', '0x10']) {
    assertError(await alice.api.get(`${V2}/sessions`, { query: { page } }), 400, 'validation_error', `page=${page}`)
  }
  for (const id of ['1e400', '9007199254740993']) {
    assertError(await alice.api.get(`${V2}/chat/history`, { query: { chat_id: id } }), 400, 'validation_error', `chat_id=${id}`)
  }
  assert.equal((await alice.api.get(`${V2}/sessions`, { query: { page: '1' } })).status, 200)
})
