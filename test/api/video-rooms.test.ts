/**
 * Video rooms through the main service, with a real video service: create, join (ticket,
 * signaling URL, ICE servers), the video service's reports making the main service the record of
 * participants (joins, leaves, screen sharing), the room ending when the last participant leaves
 * or after the idle time, a 1:1 call's room, RTCSettings, and the ICE configuration proxied at
 * /video/integration/config — with 504 upstream_timeout when the video service is down or never
 * answers, while the main service keeps answering everything else.
 */
import assert from 'node:assert/strict'
import net from 'node:net'
import { describe, test } from 'node:test'
import { endIdleRooms } from '../../src/modules/calls/rooms.js'
import { videoSecret } from '../../src/video/secret.js'
import { SIGNATURE_HEADER, signBody } from '../../src/video/ticket.js'
import { assertError } from '../harness/assert.js'
import { TestClock } from '../harness/clock.js'
import { ISO, registerUsers, V2 } from '../harness/messaging.js'
import { freePort } from '../harness/process.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { SignalClient, startTestVideo, TEST_VIDEO_SECRET } from '../harness/signal.js'
import { waitFor } from '../harness/wait.js'

const SDP = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n'
const clock = new TestClock()
const video = await startTestVideo({ TURN_SECRET: 'turn secret', TURN_URLS: 'turn:127.0.0.1:3478', STUN_URLS: 'stun:127.0.0.1:3478' })
const server = await startTestServer({
  clock,
  env: {
    VIDEO_URL: video.url,
    VIDEO_SECRET: TEST_VIDEO_SECRET,
    TURN_SECRET: 'turn secret',
    TURN_URLS: 'turn:127.0.0.1:3478',
    STUN_URLS: 'stun:127.0.0.1:3478',
    VIDEO_ROOM_IDLE_SECONDS: '60',
    VIDEO_MEDIA_REPORT_RATE_LIMIT: '100000/1',
  },
})

const createRoom = async (user: TestUser, body: Record<string, unknown> = {}) => {
  const res = await user.api.post(`${V2}/calls/rooms`, body)
  assert.equal(res.status, 200, res.text)
  return res.body.data
}
const join = async (user: TestUser, roomId: string, body: Record<string, unknown> = {}) => {
  const res = await user.api.post(`${V2}/calls/rooms/${roomId}/join`, body)
  assert.equal(res.status, 200, res.text)
  return res.body.data
}
const participants = async (user: TestUser, roomId: string) => {
  const res = await user.api.get(`${V2}/calls/rooms/${roomId}/participants`)
  assert.equal(res.status, 200, res.text)
  return res.body.items as any[]
}
const roomOf = async (user: TestUser, roomId: string) => (await user.api.get(`${V2}/calls/rooms/${roomId}/info`)).body.data
/** A report as the video service sends one, signed with its secret (`at` is now unless given). */
const postReport = async (report: Record<string, unknown>) => {
  const body = JSON.stringify({ at: clock.now(), ...report })
  const res = await fetch(`${server.url}/internal/video/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(videoSecret(server.ctx.config), body) },
    body,
  })
  return { status: res.status, text: await res.text() }
}
/** Such a report, which must be taken (200); answers whether it changed the record. */
const signedReport = async (report: Record<string, unknown>): Promise<boolean> => {
  const { status, text } = await postReport(report)
  assert.equal(status, 200, text)
  return JSON.parse(text).data.applied
}

test('a room: create, join with a ticket, signal, media state and leaves recorded by the main service; ends with its last participant', async () => {
  const [ann, bob, cat] = await registerUsers(server, 3)
  const room = await createRoom(ann)
  assert.deepEqual(
    [room.creator_id, room.status, room.call_type, room.participant_count, room.ended_at],
    [ann.id, 'active', 'video', 0, null],
  )
  assert.match(room.room_id, /^[A-Za-z0-9_-]{16}$/)

  const annTicket = await join(ann, room.room_id)
  assert.equal(annTicket.signaling_url, `${video.url.replace('http', 'ws')}/signal`)
  assert.match(annTicket.expires_at, ISO)
  // STUN, and TURN with REST credentials for this user
  assert.deepEqual(annTicket.ice.ice_servers[0], { urls: ['stun:127.0.0.1:3478'] })
  assert.match(annTicket.ice.ice_servers[1].username, new RegExp(`^\\d+:${ann.id}$`))
  const bobTicket = await join(bob, room.room_id, { audio_only: true })

  const { client: annSocket, joined: aj } = await SignalClient.join(annTicket.signaling_url, room.room_id, annTicket.ticket)
  const { client: bobSocket, joined: bj } = await SignalClient.join(bobTicket.signaling_url, room.room_id, bobTicket.ticket)
  assert.deepEqual(
    bj.peers.map((p: any) => [p.user_id, p.username]),
    [[ann.id, ann.username]],
  )
  assert.equal((await annSocket.next('peer-joined')).peer.audio_only, true)
  bobSocket.send({ type: 'offer', to: aj.peer_id, sdp: SDP })
  assert.equal((await annSocket.next('offer')).from, bj.peer_id)
  annSocket.send({ type: 'answer', to: bj.peer_id, sdp: SDP })
  assert.equal((await bobSocket.next('answer')).from, aj.peer_id)

  // the video service told the main service: both connected
  await waitFor(async () => ((await participants(ann, room.room_id)).every((p) => p.connected) ? true : undefined), {
    timeoutMs: 3000,
    message: 'both connected',
  })
  let list = await participants(cat, room.room_id)
  assert.deepEqual(
    list.map((p) => [p.user_id, p.username, p.audio_only, p.screensharing, p.left_at]),
    [
      [ann.id, ann.username, false, false, null],
      [bob.id, bob.username, true, false, null],
    ],
  )
  assert.match(list[0].joined_at, ISO)

  annSocket.send({ type: 'media', audio: true, video: true, screenshare: true })
  await bobSocket.next('media')
  await waitFor(async () => ((await participants(ann, room.room_id))[0].screensharing ? true : undefined), {
    timeoutMs: 3000,
    message: 'screen sharing recorded',
  })

  // bob's socket leaves: recorded as his leave; the room goes on
  bobSocket.send({ type: 'leave' })
  await annSocket.next('peer-left')
  await waitFor(async () => ((await participants(ann, room.room_id))[1].left_at ? true : undefined), {
    timeoutMs: 3000,
    message: 'bob left',
  })
  assert.equal((await roomOf(ann, room.room_id)).status, 'active')

  // ann leaves over HTTP... while her socket is still open, the room ends with its last participant
  clock.advance(30_000)
  const left = await ann.api.post(`${V2}/calls/rooms/${room.room_id}/leave`)
  assert.equal(left.status, 200, left.text)
  assert.deepEqual([left.body.data.status, left.body.data.participant_count], ['ended', 2])
  assert.ok(left.body.data.duration >= 30, JSON.stringify(left.body.data))
  assert.match(left.body.data.ended_at, ISO)
  list = await participants(ann, room.room_id)
  assert.ok(list.every((p) => p.left_at !== null && !p.connected))

  // joining an ended room is refused clearly; so is leaving it again
  assertError(await cat.api.post(`${V2}/calls/rooms/${room.room_id}/join`, {}), 409, 'conflict', 'join an ended room')
  assertError(await ann.api.post(`${V2}/calls/rooms/${room.room_id}/leave`), 409, 'conflict', 'leave an ended room')
  // a late report from the video service changes nothing
  annSocket.send({ type: 'leave' })
  await annSocket.closing()
  assert.equal((await roomOf(ann, room.room_id)).status, 'ended')
})

test('bad input: unknown rooms, malformed ids, unsigned reports', async () => {
  const [ann] = await registerUsers(server, 1)
  assertError(await ann.api.post(`${V2}/calls/rooms/nosuchroom/join`, {}), 404, 'not_found')
  assertError(await ann.api.post(`${V2}/calls/rooms/bad%20room/join`, {}), 400, 'validation_error')
  assertError(await ann.api.post(`${V2}/calls/rooms`, { call_type: 'hologram' }), 400, 'validation_error')
  const room = await createRoom(ann)
  assertError(await ann.api.post(`${V2}/calls/rooms/${room.room_id}/join`, { audio_only: 'yes' }), 400, 'validation_error')
  assertError(await ann.api.post(`${V2}/calls/rooms/${room.room_id}/leave`), 409, 'conflict', 'leave a room never joined')
  assertError(await server.api.post(`${V2}/calls/rooms`, {}), 401, 'unauthorized')
  // a report not signed with the video secret is refused and changes nothing
  await join(ann, room.room_id)
  const report = JSON.stringify({ event: 'leave', room_id: room.room_id, user_id: ann.id, peer_id: 'x', at: Date.now() })
  const res = await fetch(`${server.url}/internal/video/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tern-video-signature': 'AAAA' },
    body: report,
  })
  assert.equal(res.status, 401)
  assert.equal((await participants(ann, room.room_id))[0].left_at, null)
})

test('a report counts for its own socket only: a leave from a socket of an earlier stay, or a report delivered twice, changes nothing', async () => {
  const [ann, bob] = await registerUsers(server, 2)
  const room = await createRoom(ann)
  const annTicket = await join(ann, room.room_id)
  const { client: annSocket } = await SignalClient.join(annTicket.signaling_url, room.room_id, annTicket.ticket)
  const bobOf = async () => (await participants(ann, room.room_id)).find((p) => p.user_id === bob.id)
  // bob's first stay: one socket, then he leaves over HTTP (the socket is closed for him)
  const first = await join(bob, room.room_id)
  const { client: firstSocket, joined: b1 } = await SignalClient.join(first.signaling_url, room.room_id, first.ticket)
  await waitFor(async () => ((await bobOf())?.connected ? true : undefined), { timeoutMs: 3000, message: 'bob connected' })
  assert.equal((await bob.api.post(`${V2}/calls/rooms/${room.room_id}/leave`)).status, 200)
  await firstSocket.closing()
  // his second stay: a new socket
  const second = await join(bob, room.room_id)
  const { client: secondSocket, joined: b2 } = await SignalClient.join(second.signaling_url, room.room_id, second.ticket)
  await waitFor(async () => ((await bobOf())?.connected ? true : undefined), { timeoutMs: 3000, message: 'bob connected again' })

  // the first socket's leave, arriving late, and its media: not about the socket he has now
  assert.equal(await signedReport({ event: 'leave', room_id: room.room_id, user_id: bob.id, peer_id: b1.peer_id }), false)
  assert.equal(
    await signedReport({
      event: 'media',
      room_id: room.room_id,
      user_id: bob.id,
      peer_id: b1.peer_id,
      media: { audio: true, video: true, screenshare: true },
    }),
    false,
  )
  // the second socket's join delivered again: still one socket
  assert.equal(await signedReport({ event: 'join', room_id: room.room_id, user_id: bob.id, peer_id: b2.peer_id, audio_only: false }), false)
  let now = await bobOf()
  assert.deepEqual([now.left_at, now.connected, now.screensharing], [null, true, false])

  // positive control: the second socket's own media and leave count, and one leave is enough
  assert.equal(
    await signedReport({
      event: 'media',
      room_id: room.room_id,
      user_id: bob.id,
      peer_id: b2.peer_id,
      media: { audio: true, video: true, screenshare: true },
    }),
    true,
  )
  assert.equal((await bobOf()).screensharing, true)
  assert.equal(await signedReport({ event: 'leave', room_id: room.room_id, user_id: bob.id, peer_id: b2.peer_id }), true)
  now = await bobOf()
  assert.equal(now.connected, false)
  assert.match(now.left_at ?? '', ISO)
  assert.equal((await roomOf(ann, room.room_id)).status, 'active')
  await secondSocket.close()
  await annSocket.close()
})

test('joins, leaves and reports on one room at once: each answered, none a 5xx (one lock order on PostgreSQL)', async () => {
  const [ann, bob] = await registerUsers(server, 2)
  const room = await createRoom(ann)
  await join(ann, room.room_id)
  await join(bob, room.room_id)
  const statuses = new Map<string, number[]>()
  const record = (what: string, status: number) => statuses.set(what, [...(statuses.get(what) ?? []), status])
  const reportStatus = async (report: Record<string, unknown>) =>
    (await postReport({ room_id: room.room_id, user_id: bob.id, ...report })).status
  for (let round = 0; round < 20; round++) {
    const peer = `storm-${round}`
    await Promise.all([
      bob.api.post(`${V2}/calls/rooms/${room.room_id}/join`, {}).then((r) => record('join', r.status)),
      reportStatus({ event: 'join', peer_id: peer }).then((status) => record('report join', status)),
      bob.api.post(`${V2}/calls/rooms/${room.room_id}/leave`).then((r) => record('leave', r.status)),
      reportStatus({ event: 'media', peer_id: peer, media: { audio: true, video: false, screenshare: round % 2 === 0 } }).then((status) =>
        record('report media', status),
      ),
      reportStatus({ event: 'leave', peer_id: peer }).then((status) => record('report leave', status)),
      ann.api.post(`${V2}/calls/rooms/${room.room_id}/join`, {}).then((r) => record('ann join', r.status)),
    ])
  }
  const allowed = new Map([
    ['join', [200]],
    ['leave', [200, 409]],
    ['report join', [200]],
    ['report media', [200]],
    ['report leave', [200]],
    ['ann join', [200]],
  ])
  for (const [what, seen] of statuses) {
    assert.equal(seen.length, 20, what)
    assert.deepEqual(
      seen.filter((s) => !allowed.get(what)!.includes(s)),
      [],
      `${what}: ${seen.join(' ')}`,
    )
  }
  // positive control: the room goes on and bob can still join and leave it
  assert.equal((await roomOf(ann, room.room_id)).status, 'active')
  await join(bob, room.room_id)
  assert.equal((await bob.api.post(`${V2}/calls/rooms/${room.room_id}/leave`)).status, 200)
  assert.equal((await roomOf(ann, room.room_id)).status, 'active')
})

test('a room nobody is connected to ends after the idle time', async () => {
  const [ann] = await registerUsers(server, 1)
  const idle = await createRoom(ann)
  await join(ann, idle.room_id)
  const busy = await createRoom(ann)
  const t = await join(ann, busy.room_id)
  const { client } = await SignalClient.join(t.signaling_url, busy.room_id, t.ticket)
  await waitFor(async () => ((await participants(ann, busy.room_id))[0].connected ? true : undefined), {
    timeoutMs: 3000,
    message: 'connected',
  })
  clock.advance(61_000)
  await endIdleRooms(server.ctx)
  assert.equal((await roomOf(ann, idle.room_id)).status, 'ended')
  // positive control beside it: the room with a live socket goes on
  assert.equal((await roomOf(ann, busy.room_id)).status, 'active')
  await client.close()
})

test('a 1:1 call is a two-person room: once answered both parties get tickets and signal through the video service', async () => {
  const [ann, bob, eve] = await registerUsers(server, 3)
  const started = await ann.api.post(`${V2}/calls/start`, { receiver_id: bob.id, call_type: 'audio' })
  const id = started.body.data.call_id
  assertError(await ann.api.post(`${V2}/calls/${id}/ticket`, {}), 409, 'conflict', 'ticket while ringing')
  assert.equal((await bob.api.post(`${V2}/calls/${id}/answer`)).status, 200)
  assertError(await eve.api.post(`${V2}/calls/${id}/ticket`, {}), 404, 'not_found', "someone else's call")
  const annT = (await ann.api.post(`${V2}/calls/${id}/ticket`, {})).body.data
  const bobT = (await bob.api.post(`${V2}/calls/${id}/ticket`, {})).body.data
  assert.equal(annT.room_id, `call-${id}`)
  assert.equal(bobT.room_id, annT.room_id)
  assert.equal(annT.room.call_id, id)
  assertError(await eve.api.post(`${V2}/calls/rooms/${annT.room_id}/join`, {}), 404, 'not_found', "joining someone else's call room")
  const { client: a, joined: aj } = await SignalClient.join(annT.signaling_url, annT.room_id, annT.ticket)
  const { client: b, joined: bj } = await SignalClient.join(bobT.signaling_url, bobT.room_id, bobT.ticket)
  assert.equal(aj.peers.length, 0)
  assert.equal(bj.peers[0].audio_only, true)
  a.send({ type: 'offer', to: bj.peer_id, sdp: SDP })
  assert.equal((await b.next('offer')).from_user_id, ann.id)
  b.send({ type: 'answer', to: aj.peer_id, sdp: SDP })
  assert.equal((await a.next('answer')).from_user_id, bob.id)
  // the call ends: its room ends with it (the job), and no more tickets
  await endIdleRooms(server.ctx)
  assert.equal((await roomOf(ann, annT.room_id)).status, 'active', 'control: the room of a going call stays')
  assert.equal((await ann.api.post(`${V2}/calls/${id}/end`)).status, 200)
  await endIdleRooms(server.ctx)
  assert.equal((await roomOf(ann, annT.room_id)).status, 'ended')
  assertError(await bob.api.post(`${V2}/calls/${id}/ticket`, {}), 409, 'conflict', 'ticket after the end')
  await a.close()
  await b.close()
})

test('RTCSettings: enabled custom servers come first; disabled they are not used', async () => {
  const [ann] = await registerUsers(server, 1)
  assert.deepEqual((await ann.api.get(`${V2}/calls/rtc-settings`)).body.data.enabled, false)
  const set = await ann.api.post(`${V2}/calls/rtc-settings`, {
    stun_server: 'stun.example.org',
    stun_port: 3479,
    turn_server: 'turn.example.org',
    turn_username: 'me',
    turn_credential: 'pw',
    enabled: true,
  })
  assert.equal(set.status, 200, set.text)
  assert.deepEqual(set.body.data, {
    stun_server: 'stun.example.org',
    stun_port: 3479,
    turn_server: 'turn.example.org',
    turn_port: null,
    turn_username: 'me',
    has_turn_credential: true,
    enabled: true,
  })
  const room = await createRoom(ann)
  let ice = (await join(ann, room.room_id)).ice.ice_servers
  assert.deepEqual(ice.slice(0, 2), [
    { urls: ['stun:stun.example.org:3479'] },
    { urls: ['turn:turn.example.org:3478'], username: 'me', credential: 'pw' },
  ])
  assert.equal(ice.length, 4)
  // the proxied configuration respects them too
  const proxied = await ann.api.get('/video/integration/config')
  assert.equal(proxied.status, 200, proxied.text)
  assert.deepEqual(proxied.body.data.ice_servers[0], { urls: ['stun:stun.example.org:3479'] })
  await ann.api.post(`${V2}/calls/rtc-settings`, { enabled: false })
  ice = (await join(ann, room.room_id)).ice.ice_servers
  assert.equal(ice.length, 2)
  assert.ok(!JSON.stringify(ice).includes('example.org'))
  assertError(await ann.api.post(`${V2}/calls/rtc-settings`, { stun_server: 'bad host/../x' }), 400, 'validation_error')
})

test('GET /video/integration/config is proxied from the video service: TURN credentials only with a session', async () => {
  const [ann] = await registerUsers(server, 1)
  const anonymous = await server.api.get('/video/integration/config')
  assert.equal(anonymous.status, 200, anonymous.text)
  assert.deepEqual(anonymous.body.data, { ice_servers: [{ urls: ['stun:127.0.0.1:3478'] }], ttl_seconds: 0 })
  const mine = await ann.api.get('/video/integration/config')
  assert.equal(mine.body.data.ice_servers[1].username.split(':')[1], String(ann.id))
})

describe('the video service down or silent: 504 upstream_timeout, the rest of the main service answers', async () => {
  test('stopped video service', async () => {
    const gone = await startTestVideo()
    const s = await startTestServer({ env: { VIDEO_URL: gone.url, VIDEO_SECRET: TEST_VIDEO_SECRET, VIDEO_TIMEOUT_MS: '1000' } })
    // positive control: with the service up the proxy answers
    assert.equal((await s.api.get('/video/integration/config')).status, 200)
    await gone.close()
    assertError(await s.api.get('/video/integration/config'), 504, 'upstream_timeout')
    assert.equal((await s.api.get('/health')).status, 200)
  })

  test('a video service that accepts and never answers', async () => {
    const sockets = new Set<net.Socket>()
    const silent = net.createServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => undefined)
    })
    const port = await freePort()
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve))
    let s: TestServer | null = null
    try {
      s = await startTestServer({
        env: { VIDEO_URL: `http://127.0.0.1:${port}`, VIDEO_SECRET: TEST_VIDEO_SECRET, VIDEO_TIMEOUT_MS: '1500' },
      })
      const [ann] = await registerUsers(s, 1)
      const began = Date.now()
      const pending = ann.api.get('/video/integration/config')
      // while the proxy waits, everything else answers at once
      await waitFor(async () => (sockets.size > 0 ? true : undefined), { timeoutMs: 3000, message: 'the proxy connected' })
      const health = Date.now()
      assert.equal((await s.api.get('/health')).status, 200)
      assert.equal((await ann.api.post(`${V2}/calls/rooms`, {})).status, 200)
      assert.ok(Date.now() - health < 1000, 'the main service answered while the video service hung')
      const res = await pending
      assertError(res, 504, 'upstream_timeout')
      const took = Date.now() - began
      assert.ok(took >= 1400 && took < 5000, `took ${took} ms`)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  })
})
