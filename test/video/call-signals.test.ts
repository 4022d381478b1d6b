/**
 * What users expect of calls beyond the API and the room leftovers, with a
 * real video service and a real Web Push service: the busy signal (409 `conflict` saying busy, and the busy
 * callee gets a missed call), a ringing call pushed to an offline callee and not to an online one,
 * answering or declining on one device stops the ringing on the callee's others, an HTTP leave
 * closes the user's signaling sockets in the room (and stands when the video service is down),
 * and a room ticket lets in one socket only.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { assertError } from '../harness/assert.js'
import { registerUsers, updates, V2 } from '../harness/messaging.js'
import { pushServiceOrSkip, type TestSubscription } from '../harness/push-service.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { SignalClient, startTestVideo, TEST_VIDEO_SECRET } from '../harness/signal.js'
import { assertDelivered, TestSocket } from '../harness/socket.js'
import { waitFor } from '../harness/wait.js'

const video = await startTestVideo({ STUN_URLS: 'stun:127.0.0.1:3478' })
const push = await pushServiceOrSkip()
const server = await startTestServer({
  env: {
    VIDEO_URL: video.url,
    VIDEO_SECRET: TEST_VIDEO_SECRET,
    STUN_URLS: 'stun:127.0.0.1:3478',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    PUSH_DELIVERY_INTERVAL_MS: '100',
  },
})

const start = (from: TestUser, to: TestUser) => from.api.post(`${V2}/calls/start`, { receiver_id: to.id, call_type: 'video' })
const act = (user: TestUser, id: number, what: 'answer' | 'end') => user.api.post(`${V2}/calls/${id}/${what}`)
const historyOf = async (user: TestUser) => (await user.api.get(`${V2}/calls/history`)).body.items as any[]

describe('calls as users expect them', () => {
  test('busy: calling someone in a call is 409 conflict (busy), and they get a missed call for it; calling while in a call is 409 conflict', async () => {
    const [ann, bob, cid] = await registerUsers(server, 3)
    const bobPhone = await TestSocket.connect(server.url, bob.token)
    const first = (await start(ann, bob)).body.data
    assert.equal((await bobPhone.next('call.incoming')).data.call.call_id, first.call_id)

    const refused = await start(cid, bob)
    assertError(refused, 409, 'conflict', 'the callee is in a call')
    assert.match(refused.body.error.message, /busy/)
    // the busy callee hears of the attempt as a missed call, in its history and on its devices
    const missed = (await bobPhone.next('call.ended')).data.call
    assert.deepEqual(
      [missed.caller_id, missed.receiver_id, missed.status, missed.answered_at, missed.duration_seconds],
      [cid.id, bob.id, 'missed', null, 0],
    )
    const [bobItem] = await historyOf(bob)
    assert.deepEqual(
      [bobItem.call_id, bobItem.direction, bobItem.status, bobItem.peer.user_id],
      [missed.call_id, 'incoming', 'missed', cid.id],
    )
    assert.equal((await historyOf(cid))[0].status, 'missed')
    assert.ok(
      (await updates(bob)).items.some((u: any) => u.type === 'call.ended'),
      'logged in the update sequence',
    )
    // the call going on is untouched
    assert.equal((await bob.api.get(`${V2}/calls/${first.call_id}`)).body.data.status, 'ringing')

    // the caller who is in a call is told so, not that the other is busy — and nobody gets a record
    const before = (await historyOf(cid)).length
    assertError(await start(ann, cid), 409, 'conflict', 'the caller is in a call')
    assert.equal((await historyOf(cid)).length, before)

    // free again once the call ends: the same call now rings (positive control)
    assert.equal((await act(bob, first.call_id, 'end')).status, 200)
    const again = await start(cid, bob)
    assert.equal(again.status, 200, JSON.stringify(again.body))
    assert.equal(again.body.data.status, 'ringing')
    assert.equal((await act(cid, again.body.data.call_id, 'end')).status, 200)
  })

  test('answering on one device, or declining on another, stops the ringing on every device of the callee', async () => {
    const [ann, bob] = await registerUsers(server, 2)
    const bobPhone = await TestSocket.connect(server.url, bob.token)
    const bobLaptop = await TestSocket.connect(server.url, bob.token)
    const devices = [bobPhone, bobLaptop]

    const ringing = (await start(ann, bob)).body.data
    for (const d of devices) assert.equal((await d.next('call.incoming')).data.call.call_id, ringing.call_id)
    const [onPhone, onLaptop] = await assertDelivered(devices, 'call.answered', async () =>
      assert.equal((await act(bob, ringing.call_id, 'answer')).status, 200),
    )
    assert.deepEqual([onPhone.data.call.status, onLaptop.data.call.status], ['answered', 'answered'])
    const ended = await assertDelivered(devices, 'call.ended', async () =>
      assert.equal((await act(ann, ringing.call_id, 'end')).status, 200),
    )
    assert.deepEqual(
      ended.map((f) => f.data.call.status),
      ['ended', 'ended'],
    )

    // declined on the laptop: the phone stops ringing too
    const second = (await start(ann, bob)).body.data
    for (const d of devices) await d.next('call.incoming')
    const declined = await assertDelivered(devices, 'call.ended', async () =>
      assert.equal((await act(bob, second.call_id, 'end')).status, 200),
    )
    assert.deepEqual(
      declined.map((f) => [f.data.call.call_id, f.data.call.status]),
      [
        [second.call_id, 'declined'],
        [second.call_id, 'declined'],
      ],
    )
  })

  test('a ringing call is pushed to an offline callee, and not to one online', {
    skip: push ? false : 'the push service (web-push-testing) could not start',
  }, async () => {
    const [ann, bob, cid, dan] = await registerUsers(server, 4)
    const key = (await server.api.get(`${V2}/push/vapid-public-key`)).body.data.public_key
    const subscribe = async (user: TestUser): Promise<TestSubscription> => {
      const sub = await push!.subscribe(key)
      assert.equal((await user.api.post(`${V2}/push/register`, { subscription: sub.subscription })).status, 200)
      return sub
    }
    const received = (sub: TestSubscription, n: number) =>
      waitFor(
        async () => {
          const messages = await push!.messages(sub)
          return messages.length >= n ? messages : undefined
        },
        { timeoutMs: 5000, message: `${n} push(es)` },
      )
    const [bobSub, danSub] = [await subscribe(bob), await subscribe(dan)]

    // bob is online (a socket open): his call rings there and nothing is pushed …
    const bobPhone = await TestSocket.connect(server.url, bob.token)
    const online = (await start(ann, bob)).body.data
    await bobPhone.next('call.incoming')
    // … while dan, offline, called at the same time, does get his push: the push job ran meanwhile
    const offline = (await start(cid, dan)).body.data
    const [danPush] = await received(danSub, 1)
    assert.deepEqual([danPush.type, danPush.call_id, danPush.sender.user_id], ['call', offline.call_id, cid.id])
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.deepEqual(await push!.messages(bobSub), [], 'no push to a callee who is online')
    assert.equal((await act(ann, online.call_id, 'end')).status, 200)
    assert.equal((await act(cid, offline.call_id, 'end')).status, 200)

    // bob goes offline: the next call to him is pushed
    await bobPhone.close()
    const later = await waitFor(
      async () => {
        const res = await start(ann, bob)
        return res.status === 200 ? res.body.data : undefined
      },
      { timeoutMs: 3000, message: 'a call to bob starts' },
    )
    const [bobPush] = await received(bobSub, 1)
    assert.deepEqual(
      [bobPush.type, bobPush.call_id, bobPush.call_type, bobPush.sender.username],
      ['call', later.call_id, 'video', ann.username],
    )
    assert.equal((await act(ann, later.call_id, 'end')).status, 200)
  })
})

test('GET /call: signed out it leads to the login; signed in (cookie) a page whose CSP allows no inline script and the signaling origin', async () => {
  const out = await server.api.get('/call')
  assert.equal(out.status, 303)
  assert.equal(out.headers.get('location'), '/login?next=%2Fcall')
  const [ann] = await registerUsers(server, 1)
  const page = await server.api.get('/call', { headers: { cookie: `tern_session=${ann.token}` } })
  assert.equal(page.status, 200)
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(page.text ?? '', /<script src="\/pages\/call\.js" defer><\/script>/)
  assert.doesNotMatch(page.text ?? '', /<script>|ticket|Bearer/, 'nothing inline, no secret in the page')
  const csp = page.headers.get('content-security-policy') ?? ''
  assert.match(csp, /script-src 'self'(;|$)/)
  assert.doesNotMatch(csp, /unsafe/)
  assert.ok(csp.includes(`connect-src 'self' ${new URL(video.url).origin.replace('http', 'ws')}`), csp)
  // the other pages' headers (the login page's), the CSP but for the signaling origin and media
  const login = await server.api.get('/login')
  for (const name of [
    'x-frame-options',
    'x-content-type-options',
    'referrer-policy',
    'cross-origin-opener-policy',
    'cross-origin-resource-policy',
    'strict-transport-security',
    'cache-control',
  ]) {
    assert.equal(page.headers.get(name), login.headers.get(name), name)
  }
  const loginCsp = login.headers.get('content-security-policy') ?? ''
  assert.equal(csp.replace(/ ws:\/\/[^;]+/, '').replace("; media-src 'self' blob:", ''), loginCsp)
  const script = await server.api.get('/pages/call.js')
  assert.equal(script.status, 200)
  assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/)
  assert.match(script.text ?? '', /RTCPeerConnection/)
})

describe('room leftovers', () => {
  const joinRoom = async (user: TestUser, roomId: string) => {
    const res = await user.api.post(`${V2}/calls/rooms/${roomId}/join`, {})
    assert.equal(res.status, 200, res.text)
    return res.body.data
  }

  test("an HTTP leave closes the user's signaling sockets in the room; the others see peer-left and stay", async () => {
    const [ann, bob] = await registerUsers(server, 2)
    const room = (await ann.api.post(`${V2}/calls/rooms`, {})).body.data
    const annTicket = await joinRoom(ann, room.room_id)
    const { client: annSocket, joined: aj } = await SignalClient.join(annTicket.signaling_url, room.room_id, annTicket.ticket)
    // bob in the room from two devices
    const bobTickets = [await joinRoom(bob, room.room_id), await joinRoom(bob, room.room_id)]
    const bobSockets = []
    for (const t of bobTickets) bobSockets.push((await SignalClient.join(t.signaling_url, room.room_id, t.ticket)).client)
    await annSocket.next('peer-joined')
    await annSocket.next('peer-joined')

    const left = await bob.api.post(`${V2}/calls/rooms/${room.room_id}/leave`, {})
    assert.equal(left.status, 200, left.text)
    for (const s of bobSockets) {
      assert.equal((await s.next('error')).message, 'You are no longer in this room: you left it, or its call ended')
      assert.equal((await s.closing()).code, 4010)
    }
    const gone = [(await annSocket.next('peer-left')).user_id, (await annSocket.next('peer-left')).user_id]
    assert.deepEqual(gone, [bob.id, bob.id])
    // ann's socket stays and still relays (positive control): bob comes back and gets her offer
    assert.equal(annSocket.closed, null)
    const back = await joinRoom(bob, room.room_id)
    const { client: bobAgain, joined: bj } = await SignalClient.join(back.signaling_url, room.room_id, back.ticket)
    assert.deepEqual(
      bj.peers.map((p: any) => p.peer_id),
      [aj.peer_id],
    )
    annSocket.send({ type: 'offer', to: bj.peer_id, sdp: 'v=0\r\n' })
    assert.equal((await bobAgain.next('offer')).from, aj.peer_id)
  })

  test("ending an answered call closes both parties' signaling sockets in its room and ends the room; another room's stay", async () => {
    const [ann, bob] = await registerUsers(server, 2)
    const call = (await start(ann, bob)).body.data
    assert.equal((await bob.api.post(`${V2}/calls/${call.call_id}/answer`)).status, 200)
    const ticketOf = async (user: TestUser) => {
      const res = await user.api.post(`${V2}/calls/${call.call_id}/ticket`, {})
      assert.equal(res.status, 200, res.text)
      return res.body.data
    }
    const sockets = []
    for (const user of [ann, bob]) {
      const t = await ticketOf(user)
      sockets.push((await SignalClient.join(t.signaling_url, t.room_id, t.ticket)).client)
    }
    // control: ann is also in a room of her own, which the call's end does not touch
    const other = (await ann.api.post(`${V2}/calls/rooms`, {})).body.data
    const o = await joinRoom(ann, other.room_id)
    const { client: elsewhere } = await SignalClient.join(o.signaling_url, other.room_id, o.ticket)

    assert.equal((await bob.api.post(`${V2}/calls/${call.call_id}/end`)).status, 200)
    for (const s of sockets) assert.equal((await s.closing()).code, 4010)
    const room = await waitFor(
      async () => {
        const info = (await ann.api.get(`${V2}/calls/rooms/call-${call.call_id}/info`)).body.data
        return info?.status === 'ended' ? info : undefined
      },
      { timeoutMs: 5000, message: 'the call room ended' },
    )
    assert.equal(room.participant_count, 2)
    assert.equal(elsewhere.closed, null)
    elsewhere.send({ type: 'ping' })
    await elsewhere.next('pong')
  })

  test('a room ticket lets in one socket only; a fresh ticket still works', async () => {
    const [ann] = await registerUsers(server, 1)
    const room = (await ann.api.post(`${V2}/calls/rooms`, {})).body.data
    const ticket = await joinRoom(ann, room.room_id)
    const { client: first } = await SignalClient.join(ticket.signaling_url, room.room_id, ticket.ticket)
    const copy = await SignalClient.open(ticket.signaling_url)
    copy.send({ type: 'join', room_id: room.room_id, ticket: ticket.ticket })
    assert.deepEqual(await copy.next('error'), {
      type: 'error',
      code: 'unauthorized',
      message: 'The ticket was used already; ask for a new one',
    })
    assert.equal((await copy.closing()).code, 4001)
    // a new ticket from join is let in (positive control)
    const fresh = await joinRoom(ann, room.room_id)
    const { joined } = await SignalClient.join(fresh.signaling_url, room.room_id, fresh.ticket)
    assert.equal(joined.user_id, ann.id)
    // the first ticket is still refused after its socket has gone
    await first.close()
    const later = await SignalClient.open(ticket.signaling_url)
    later.send({ type: 'join', room_id: room.room_id, ticket: ticket.ticket })
    assert.equal((await later.next('error')).code, 'unauthorized')
    assert.equal((await later.closing()).code, 4001)
  })

  test('the kick endpoint of the video service takes only signed, fresh requests', async () => {
    const refused = await fetch(`${video.url}/internal/rooms/kick`, {
      method: 'POST',
      body: JSON.stringify({ room_id: 'x', user_id: 1, at: Date.now() }),
    })
    assert.equal(refused.status, 401)
    const garbage = await fetch(`${video.url}/internal/rooms/kick`, { method: 'POST', body: 'x'.repeat(20_000) })
    assert.equal(garbage.status, 413)
  })

  test('with the video service down, a leave still succeeds (and is recorded)', async () => {
    const [ann] = await registerUsers(server, 1)
    const room = (await ann.api.post(`${V2}/calls/rooms`, {})).body.data
    await joinRoom(ann, room.room_id)
    await video.close()
    const started = Date.now()
    const left = await ann.api.post(`${V2}/calls/rooms/${room.room_id}/leave`, {})
    assert.equal(left.status, 200, left.text)
    assert.equal(left.body.data.status, 'ended')
    assert.ok(Date.now() - started < 5500, 'bounded by the video timeout')
    const rows = (await ann.api.get(`${V2}/calls/rooms/${room.room_id}/participants`)).body.items
    assert.ok(rows[0].left_at, 'the leave is recorded')
  })
})
