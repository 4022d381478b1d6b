/**
 * @tern/client (client/) against a real server: the typed REST client (openapi-fetch over the
 * types generated from /openapi.json) with a bearer token and in cookie mode (the CSRF token
 * fetched and sent by the client itself), and the typed gateway helper (frames typed from
 * /asyncapi.json) hearing a message live and, after a dropped connection, catching up on what
 * it missed once each. Also: /asyncapi.json parses as AsyncAPI with no errors, and every message
 * it names has its type in events.d.ts.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import test from 'node:test'
import { Parser } from '@asyncapi/parser'
import { connectGateway, createTernClient, type Gateway, type ServerFrame, type WebSocketLike } from '@tern/client'
import WebSocket from 'ws'
import { startTestServer, uniqueName } from '../harness/server.js'

const server = await startTestServer()
const V2 = '/api.v2/api' as const

async function register(name = uniqueName('c')) {
  const anonymous = createTernClient({ baseUrl: server.url })
  const { data, response } = await anonymous.POST(`${V2}/auth/register`, { body: { username: name, password: 'correct horse battery' } })
  assert.equal(response.status, 201)
  assert.ok(data)
  return { id: data.data.user.user_id, username: data.data.user.username, token: data.data.session_token }
}

/** A gateway connection that records its frames, with a wait for one that matches. */
function listen(token: string, resume?: ReturnType<Gateway['position']>) {
  const frames: ServerFrame[] = []
  let wake = () => {}
  const gateway = connectGateway({
    baseUrl: server.url,
    token,
    resume,
    WebSocket: WebSocket as unknown as new (url: string) => WebSocketLike,
    onEvent: (frame) => {
      frames.push(frame)
      wake()
    },
  })
  const waitFor = async (match: (frame: ServerFrame) => boolean, what: string) => {
    const deadline = Date.now() + 5000
    for (;;) {
      const found = frames.find(match)
      if (found) return found
      if (Date.now() > deadline) throw new Error(`no ${what} frame; got ${frames.map((f) => f.type).join(', ')}`)
      await new Promise<void>((resolve) => {
        wake = resolve
        setTimeout(resolve, 100)
      })
    }
  }
  return { gateway, frames, waitFor }
}

const isMessage = (content: string) => (frame: ServerFrame) => frame.type === 'message.new' && frame.data.message.content === content

test('the typed client registers, sends a message with a bearer token, and the gateway helper hears it live', async () => {
  const alice = await register()
  const bob = await register()
  const bobSocket = listen(bob.token)
  await bobSocket.gateway.ready
  const api = createTernClient({ baseUrl: server.url, auth: { bearer: alice.token } })
  const me = await api.GET(`${V2}/auth/me`)
  assert.equal(me.data?.data.username, alice.username)
  const sent = await api.POST(`${V2}/messages/send`, { body: { receiver_id: bob.id, content: 'hello from the typed client' } })
  assert.equal(sent.response.status, 200, JSON.stringify(sent.error))
  const frame = await bobSocket.waitFor(isMessage('hello from the typed client'), 'message.new')
  assert.equal(frame.type, 'message.new')
  if (frame.type === 'message.new') assert.equal(frame.data.message.sender_id, alice.id)
  bobSocket.gateway.close()
})

test('the gateway helper sends over the socket: request() resolves with the stored message, and rejects with the server’s code', async () => {
  const alice = await register()
  const bob = await register()
  const aliceSocket = listen(alice.token)
  const bobSocket = listen(bob.token)
  await Promise.all([aliceSocket.gateway.ready, bobSocket.gateway.ready])
  const message = await aliceSocket.gateway.request('send', { receiver_id: bob.id, content: 'over the typed socket' })
  assert.ok(message && 'content' in message && message.content === 'over the typed socket', JSON.stringify(message))
  await bobSocket.waitFor(isMessage('over the typed socket'), 'message.new')
  // the ack stood for alice's own message.new on her socket: her position is past it, and it never reached onEvent
  const aliceApi = createTernClient({ baseUrl: server.url, auth: { bearer: alice.token } })
  const latest = (await aliceApi.GET(`${V2}/updates`, { params: { query: {} } })).data as { data: { seq: number } } | undefined
  assert.equal(aliceSocket.gateway.position().seq, latest?.data.seq)
  assert.ok(!aliceSocket.frames.some(isMessage('over the typed socket')), 'no message.new of her own on the socket that sent it')
  assert.ok(bobSocket.frames.some(isMessage('over the typed socket')), 'bob got it as message.new')
  const api = createTernClient({ baseUrl: server.url, auth: { bearer: bob.token } })
  const history = await api.GET(`${V2}/chat/history`, { params: { query: { chat_id: (message as { chat_id: number }).chat_id } } })
  assert.deepEqual(
    history.data?.items.map((m) => m.content),
    ['over the typed socket'],
  )
  await assert.rejects(
    aliceSocket.gateway.request('edit', { message_id: 2 ** 40, content: 'nothing there' }),
    (error: Error & { code?: string }) => {
      assert.equal(error.name, 'GatewayRequestError')
      assert.equal(error.code, 'not_found')
      return true
    },
  )
  aliceSocket.gateway.close()
  bobSocket.gateway.close()
})

test('after a dropped connection the helper resumes from its position: every missed message once, in order', async () => {
  const alice = await register()
  const bob = await register()
  const api = createTernClient({ baseUrl: server.url, auth: { bearer: alice.token } })
  const first = listen(bob.token)
  await first.gateway.ready
  await api.POST(`${V2}/messages/send`, { body: { receiver_id: bob.id, content: 'before' } })
  await first.waitFor(isMessage('before'), 'before')
  const position = first.gateway.position()
  first.gateway.close()
  for (const content of ['missed 1', 'missed 2', 'missed 3']) {
    const sent = await api.POST(`${V2}/messages/send`, { body: { receiver_id: bob.id, content } })
    assert.equal(sent.response.status, 200)
  }
  const second = listen(bob.token, position)
  await second.gateway.ready
  await second.waitFor(isMessage('missed 3'), 'missed 3')
  const contents = second.frames.flatMap((f) => (f.type === 'message.new' ? [f.data.message.content] : []))
  assert.deepEqual(contents, ['missed 1', 'missed 2', 'missed 3'], 'each missed message once, in order, and not the one already seen')
  second.gateway.close()
})

test('cookie mode: the client fetches the CSRF token itself and its changes go through; without the token the same call is 403', async () => {
  const alice = await register()
  const bob = await register()
  const login = await fetch(`${server.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login: alice.username, password: 'correct horse battery' }),
  })
  const cookie = login.headers
    .getSetCookie()
    .find((line) => line.startsWith('tern_session='))!
    .split(';')[0]
  const web = createTernClient({ baseUrl: server.url, auth: { cookie: true }, headers: { cookie } })
  const sent = await web.POST(`${V2}/messages/send`, { body: { receiver_id: bob.id, content: 'by cookie' } })
  assert.equal(sent.response.status, 200, JSON.stringify(sent.error))
  assert.match((await web.csrfToken()) ?? '', /^[A-Za-z0-9_-]{40,}$/)
  // the same request without the client's CSRF header
  const bare = createTernClient({ baseUrl: server.url, headers: { cookie } })
  const refused = await bare.POST(`${V2}/messages/send`, { body: { receiver_id: bob.id, content: 'no token' } })
  assert.equal(refused.response.status, 403)
  assert.equal(refused.error?.error.code, 'forbidden')
})

test('/asyncapi.json is valid AsyncAPI (@asyncapi/parser, no errors) and events.d.ts has a type for each of its messages', async () => {
  const document = (await (await fetch(`${server.url}/asyncapi.json`)).json()) as { components: { messages: Record<string, unknown> } }
  const { diagnostics } = await new Parser().parse(JSON.stringify(document))
  assert.deepEqual(
    diagnostics.filter((d) => d.severity === 0),
    [],
  )
  const events = fs.readFileSync(path.join(import.meta.dirname, '../../client/src/events.d.ts'), 'utf8')
  for (const name of Object.keys(document.components.messages)) {
    const key = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `'${name}'`
    assert.match(events, new RegExp(`^  ${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: [A-Za-z]+Frame$`, 'm'), name)
  }
})
