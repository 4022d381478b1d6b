/**
 * A video signaling socket ends with the session that opened it: a V2 logout, the V1 cookie
 * logout, a revoke (DELETE V2/sessions/{id}) and a ban close that session's sockets (a ban: every
 * session of the user) within a second, the other sockets in the room staying open and served;
 * a ticket of an ended session is refused on a reconnect; the main service refuses reports from
 * such a socket (so a video service it could not reach closes it all the same); with TEST_REDIS_URL
 * two main instances, each with its own video service on one Redis, close sockets on both.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { videoSecret } from '../../src/video/secret.js'
import { SIGNATURE_HEADER, signBody } from '../../src/video/ticket.js'
import { testDatabaseUrl, testRedisUrl } from '../harness/database.js'
import { registerUsers, V2 } from '../harness/messaging.js'
import { freePort } from '../harness/process.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { SignalClient, startTestVideo, TEST_VIDEO_SECRET } from '../harness/signal.js'

const SDP = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n'
const video = await startTestVideo()
const server = await startTestServer({ env: { VIDEO_URL: video.url, VIDEO_SECRET: TEST_VIDEO_SECRET } })

const createRoom = async (user: TestUser) => {
  const res = await user.api.post(`${V2}/calls/rooms`, {})
  assert.equal(res.status, 200, res.text)
  return res.body.data.room_id as string
}
/** A ticket for `roomId` asked for with `token` (one session of the user). */
const ticketFor = async (on: TestServer, token: string, roomId: string) => {
  const res = await on.api.as(token).post(`${V2}/calls/rooms/${roomId}/join`, {})
  assert.equal(res.status, 200, res.text)
  return res.body.data as { ticket: string; signaling_url: string }
}
const joinWith = async (on: TestServer, token: string, roomId: string) => {
  const t = await ticketFor(on, token, roomId)
  return SignalClient.join(t.signaling_url, roomId, t.ticket)
}
/** Another session of the user (a second device). */
const login = async (on: TestServer, user: TestUser) => {
  const res = await on.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })
  assert.equal(res.status, 200, res.text)
  return res.body.data.session_token as string
}
/** Waits for the socket to close: at most `ms` after `since`. */
const closedWithin = async (socket: SignalClient, since: number, ms = 1000) => {
  const closed = await socket.closing(ms + 500)
  const took = Date.now() - since
  assert.ok(took <= ms, `closed after ${took} ms`)
  return closed
}
/** The socket is still open and served: it hears `from`'s offer. */
const stillServed = async (socket: SignalClient, peerId: string, from: SignalClient) => {
  assert.equal(socket.closed, null, 'still open')
  from.send({ type: 'offer', to: peerId, sdp: SDP })
  assert.equal((await socket.next('offer')).sdp, SDP)
}
/** A reconnect with a ticket issued before the end: refused with 4001. */
const refused = async (t: { ticket: string; signaling_url: string }, roomId: string) => {
  const again = await SignalClient.open(t.signaling_url)
  again.send({ type: 'join', room_id: roomId, ticket: t.ticket })
  const error = await again.next('error')
  assert.equal(error.code, 'unauthorized')
  assert.equal((await again.closing()).code, 4001)
}

/**
 * ann has two sessions (two devices) in bob's room, and a spare ticket of the first; bob is there
 * too. `end` ends ann's first session; it closes in time, the second device and bob stay.
 */
async function sessionEnds(end: (ann: TestUser, firstSessionId: number, secondToken: string) => Promise<void>) {
  const [ann, bob] = await registerUsers(server, 2)
  const roomId = await createRoom(bob)
  const second = await login(server, ann)
  const { client: bobSocket, joined: bj } = await joinWith(server, bob.token, roomId)
  const { client: first } = await joinWith(server, ann.token, roomId)
  const { client: other, joined: oj } = await joinWith(server, second, roomId)
  const spare = await ticketFor(server, ann.token, roomId)
  const sessions = await server.api.as(second).get(`${V2}/sessions`)
  const firstSessionId = (sessions.body.items as any[]).find((s) => !s.is_current).id as number

  const since = Date.now()
  await end(ann, firstSessionId, second)
  const closed = await closedWithin(first, since)
  assert.equal(closed.code, 4001)
  // bob hears that the peer left; ann's other device and bob are still served
  await bobSocket.next('peer-left')
  await stillServed(other, oj.peer_id, bobSocket)
  await stillServed(bobSocket, bj.peer_id, other)
  await refused(spare, roomId)
  // positive control: the other session still gets tickets that are let in
  const { client: again } = await joinWith(server, second, roomId)
  await again.close()
  await Promise.all([bobSocket.close(), other.close()])
}

test("V2 logout closes that session's signaling sockets within a second; its spare ticket is refused", () =>
  sessionEnds(async (ann) => {
    assert.equal((await ann.api.post(`${V2}/auth/logout`)).status, 200)
  }))

test('revoking a session (DELETE V2/sessions/{id}) from another device closes its signaling sockets', () =>
  sessionEnds(async (_ann, firstSessionId, second) => {
    assert.equal((await server.api.as(second).delete(`${V2}/sessions/${firstSessionId}`)).status, 200)
  }))

test("the V1 cookie logout (POST /logout) closes the cookie session's signaling sockets", async () => {
  const [ann, bob] = await registerUsers(server, 2)
  const roomId = await createRoom(bob)
  const res = await fetch(`${server.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login: ann.username, password: ann.password }),
  })
  assert.equal(res.status, 200, await res.text())
  const cookieToken = /tern_session=([^;]+)/.exec(res.headers.getSetCookie().join('\n'))?.[1]
  assert.ok(cookieToken, 'a session cookie')
  const { client: bobSocket, joined: bj } = await joinWith(server, bob.token, roomId)
  const { client: cookieSocket } = await joinWith(server, cookieToken, roomId)
  const { client: bearerSocket, joined: aj } = await joinWith(server, ann.token, roomId)
  const spare = await ticketFor(server, cookieToken, roomId)

  const since = Date.now()
  const web = await fetch(`${server.url}/api/web/session`, { headers: { cookie: `tern_session=${cookieToken}` } })
  const csrf: string = (await web.json()).data.csrf_token
  const out = await fetch(`${server.url}/logout`, {
    method: 'POST',
    headers: { cookie: `tern_session=${cookieToken}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf }),
    redirect: 'manual',
  })
  assert.equal(out.status, 303)
  assert.equal((await closedWithin(cookieSocket, since)).code, 4001)
  await stillServed(bearerSocket, aj.peer_id, bobSocket)
  await stillServed(bobSocket, bj.peer_id, bearerSocket)
  await refused(spare, roomId)
})

test('a ban closes every signaling socket of the user within a second and refuses their tickets; others stay', async () => {
  const [ann, bob] = await registerUsers(server, 2)
  const admin = await server.createAdmin()
  const roomId = await createRoom(bob)
  const second = await login(server, ann)
  const { client: bobSocket, joined: bj } = await joinWith(server, bob.token, roomId)
  const { client: first } = await joinWith(server, ann.token, roomId)
  const { client: other } = await joinWith(server, second, roomId)
  const spare = await ticketFor(server, second, roomId)
  const carolRoom = await createRoom(bob)
  const { client: elsewhere } = await joinWith(server, ann.token, carolRoom)

  const since = Date.now()
  assert.equal((await admin.api.post(`/api/admin/users/${ann.id}/ban`, { reason: 'test' })).status, 200)
  for (const socket of [first, other, elsewhere]) assert.ok([4001, 4003].includes((await closedWithin(socket, since)).code))
  await refused(spare, roomId)
  // positive control: bob's socket is open and served (a new peer joins and signals to him)
  await bobSocket.drain('peer-joined', 50)
  const [cat] = await registerUsers(server, 1)
  const { client: catSocket } = await joinWith(server, cat.token, roomId)
  assert.equal((await bobSocket.next('peer-joined')).peer.user_id, cat.id)
  await stillServed(bobSocket, bj.peer_id, catSocket)
  await Promise.all([bobSocket.close(), catSocket.close()])
})

test('reports from a socket of an ended session are refused (403); its video service then closes it', async () => {
  // a main service that cannot reach the video service its users signal on: it cannot tell it of a logout
  const blind = await startTestServer({
    env: { VIDEO_URL: `http://127.0.0.1:${await freePort()}`, VIDEO_SECRET: TEST_VIDEO_SECRET, VIDEO_TIMEOUT_MS: '300' },
  })
  const [ann, bob] = await registerUsers(blind, 2)
  const roomId = await createRoom(bob)
  const second = await login(blind, ann)
  const t1 = await ticketFor(blind, ann.token, roomId)
  const t2 = await ticketFor(blind, second, roomId)
  const { client: first } = await SignalClient.join(video.url, roomId, t1.ticket)
  const { client: other } = await SignalClient.join(video.url, roomId, t2.ticket)
  const listed = (await ann.api.as(second).get(`${V2}/sessions`)).body.items as any[]
  const gone = listed.find((s) => !s.is_current).id as number
  const live = listed.find((s) => s.is_current).id as number
  assert.equal((await ann.api.post(`${V2}/auth/logout`)).status, 200)
  // the video service heard nothing: the socket is open until its next report is refused
  await new Promise((resolve) => setTimeout(resolve, 400))
  assert.equal(first.closed, null)
  first.send({ type: 'media', audio: false, video: false, screenshare: false })
  other.send({ type: 'media', audio: false, video: false, screenshare: true })
  assert.equal((await first.closing(2000)).code, 4001)
  // positive control: the other session's socket is open, and its report was written
  const sessionsOf = async () => (await ann.api.as(second).get(`${V2}/calls/rooms/${roomId}/participants`)).body.items as any[]
  for (let i = 0; i < 40 && !(await sessionsOf()).find((p) => p.user_id === ann.id)?.screensharing; i++)
    await new Promise((r) => setTimeout(r, 50))
  assert.equal((await sessionsOf()).find((p) => p.user_id === ann.id)?.screensharing, true)
  assert.equal(other.closed, null)

  // the same through the front door of the report endpoint: an ended session 403, a live one 200
  const post = async (sessionId: number) => {
    const body = JSON.stringify({
      event: 'join',
      room_id: roomId,
      user_id: ann.id,
      session_id: sessionId,
      peer_id: `p-${randomBytes(4).toString('hex')}`,
      at: Date.now(),
    })
    const res = await fetch(`${blind.url}/internal/video/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(videoSecret(blind.ctx.config), body) },
      body,
    })
    return { status: res.status, body: await res.json() }
  }
  const refusedReport = await post(gone)
  assert.equal(refusedReport.status, 403)
  assert.equal(refusedReport.body.error.code, 'forbidden')
  assert.equal((await post(live)).status, 200)
  await other.close()
})

const skipMulti = testDatabaseUrl && testRedisUrl ? false : 'needs PostgreSQL + Redis (TEST_DATABASE_URL, TEST_REDIS_URL)'
if (skipMulti) console.log(`# SKIPPED two instances closing each other's video sockets: ${skipMulti}`)

describe('two main instances, each with its own video service, on one PostgreSQL and one Redis', { skip: skipMulti }, async () => {
  test('a logout and a ban through one instance close the signaling sockets on both video services', async () => {
    const prefix = `tern-test-${randomBytes(6).toString('hex')}:`
    const videoOne = await startTestVideo({ REDIS_URL: testRedisUrl!, REDIS_PREFIX: prefix })
    const videoTwo = await startTestVideo({ REDIS_URL: testRedisUrl!, REDIS_PREFIX: prefix })
    const one = await startTestServer({ env: { VIDEO_URL: videoOne.url, VIDEO_SECRET: TEST_VIDEO_SECRET, REDIS_PREFIX: prefix } })
    const two = await startTestServer({
      database: one.database,
      env: { VIDEO_URL: videoTwo.url, VIDEO_SECRET: TEST_VIDEO_SECRET, REDIS_PREFIX: prefix },
    })
    const [ann, bob] = await registerUsers(one, 2)
    const roomId = await createRoom(bob)
    const second = await login(two, ann)
    const { client: bobSocket, joined: bj } = await joinWith(one, bob.token, roomId)
    // ann's first session signals through instance two's video service, her second through one's
    const { client: onTwo } = await joinWith(two, ann.token, roomId)
    const spareOnTwo = await ticketFor(two, ann.token, roomId)
    const { client: onOne, joined: oj } = await joinWith(one, second, roomId)

    let since = Date.now()
    assert.equal((await ann.api.post(`${V2}/auth/logout`)).status, 200)
    assert.equal((await closedWithin(onTwo, since)).code, 4001)
    await refused(spareOnTwo, roomId)
    // positive control: the other session's socket (on the other video service) and bob's stay served
    await stillServed(onOne, oj.peer_id, bobSocket)
    await stillServed(bobSocket, bj.peer_id, onOne)

    const { client: againOnTwo } = await joinWith(two, second, roomId)
    const admin = await one.createAdmin()
    since = Date.now()
    assert.equal((await admin.api.post(`/api/admin/users/${ann.id}/ban`, {})).status, 200)
    await closedWithin(onOne, since)
    await closedWithin(againOnTwo, since)
    assert.equal(bobSocket.closed, null)
    await bobSocket.close()
    // the instance that shares the database closes first (the owner drops it on close)
    await two.close()
    await one.close()
  })
})
