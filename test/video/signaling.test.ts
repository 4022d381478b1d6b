/**
 * The video service alone (no database): tickets are checked before anything is relayed, frames
 * travel between the peers of a room, bad frames get error frames and abuse closes the socket;
 * with TEST_REDIS_URL two video instances share rooms.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { Parser } from '@asyncapi/parser'
import { Ajv } from 'ajv'
import { signBody, signTicket } from '../../src/video/ticket.js'
import { testRedisUrl } from '../harness/database.js'
import { SignalClient, startTestVideo } from '../harness/signal.js'

const SDP = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n'

describe('video service', async () => {
  const video = await startTestVideo()

  test('a peer without a good ticket is refused before any frame is relayed', async () => {
    const room = `r-${randomBytes(4).toString('hex')}`
    const { client: alice, joined } = await SignalClient.join(video.url, room, video.ticket({ room, uid: 1 }))
    assert.deepEqual(joined.peers, [])

    // no ticket: an offer as the first frame
    const noTicket = await SignalClient.open(video.url)
    noTicket.send({ type: 'offer', to: joined.peer_id, sdp: SDP })
    assert.equal((await noTicket.next('error')).code, 'not_joined')
    assert.equal((await noTicket.closing()).code, 4001)

    // forged: signed with another secret
    const forged = await SignalClient.open(video.url)
    forged.send({
      type: 'join',
      room_id: room,
      ticket: signTicket(randomBytes(32), { room, uid: 2, username: 'mallory', exp: Date.now() + 60_000, audio_only: false, cb: null }),
    })
    assert.deepEqual(await forged.next('error'), { type: 'error', code: 'unauthorized', message: 'The ticket is forged' })
    assert.equal((await forged.closing()).code, 4001)

    // tampered: a good ticket's claims changed
    const good = video.ticket({ room, uid: 2 })
    const [prefix, claims, sig] = good.split('.')
    const changed = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(claims, 'base64url').toString()), uid: 3 })).toString(
      'base64url',
    )
    const tampered = await SignalClient.open(video.url)
    tampered.send({ type: 'join', room_id: room, ticket: `${prefix}.${changed}.${sig}` })
    assert.equal((await tampered.next('error')).code, 'unauthorized')
    assert.equal((await tampered.closing()).code, 4001)

    // expired
    const expired = await SignalClient.open(video.url)
    expired.send({ type: 'join', room_id: room, ticket: video.ticket({ room, uid: 2, exp: Date.now() - 1 }) })
    assert.deepEqual(await expired.next('error'), { type: 'error', code: 'unauthorized', message: 'The ticket is expired' })
    assert.equal((await expired.closing()).code, 4001)

    // another room's ticket
    const other = await SignalClient.open(video.url)
    other.send({ type: 'join', room_id: room, ticket: video.ticket({ room: 'another-room', uid: 2 }) })
    assert.equal((await other.next('error')).code, 'forbidden')
    assert.equal((await other.closing()).code, 4003)

    // garbage before the join
    const garbage = await SignalClient.open(video.url)
    garbage.send('not json')
    assert.equal((await garbage.next('error')).code, 'malformed')
    assert.equal((await garbage.closing()).code, 4001)

    // none of them was ever in the room: alice heard of nobody
    assert.deepEqual(await alice.drain('peer-joined', 100), [])
    // positive control: a good ticket is let in and alice hears of it
    const { client: bob } = await SignalClient.join(video.url, room, good)
    assert.equal((await alice.next('peer-joined')).peer.user_id, 2)
    await bob.close()
  })

  test('offer, answer, ICE and media travel between the peers of a room; leaving is told', async () => {
    const room = `r-${randomBytes(4).toString('hex')}`
    const { client: alice, joined: aj } = await SignalClient.join(video.url, room, video.ticket({ room, uid: 1, username: 'alice' }))
    const { client: bob, joined: bj } = await SignalClient.join(
      video.url,
      room,
      video.ticket({ room, uid: 2, username: 'bob', audio_only: true }),
    )
    assert.deepEqual(bj.peers, [
      { peer_id: aj.peer_id, user_id: 1, username: 'alice', audio_only: false, media: { audio: true, video: true, screenshare: false } },
    ])
    const joinedFrame = await alice.next('peer-joined')
    assert.deepEqual(joinedFrame.peer, {
      peer_id: bj.peer_id,
      user_id: 2,
      username: 'bob',
      audio_only: true,
      media: { audio: true, video: false, screenshare: false },
    })

    bob.send({ type: 'offer', to: aj.peer_id, sdp: SDP })
    assert.deepEqual(await alice.next('offer'), { type: 'offer', from: bj.peer_id, from_user_id: 2, sdp: SDP })
    alice.send({ type: 'answer', to: bj.peer_id, sdp: SDP })
    assert.deepEqual(await bob.next('answer'), { type: 'answer', from: aj.peer_id, from_user_id: 1, sdp: SDP })
    const candidate = { candidate: 'candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host', sdpMid: '0', sdpMLineIndex: 0 }
    alice.send({ type: 'ice-candidate', to: bj.peer_id, candidate })
    assert.deepEqual(await bob.next('ice-candidate'), { type: 'ice-candidate', from: aj.peer_id, from_user_id: 1, candidate })
    alice.send({ type: 'ice-candidate', to: bj.peer_id, candidate: null })
    assert.equal((await bob.next('ice-candidate')).candidate, null)

    alice.send({ type: 'media', audio: false, video: true, screenshare: true })
    assert.deepEqual(await bob.next('media'), { type: 'media', from: aj.peer_id, user_id: 1, audio: false, video: true, screenshare: true })
    // an audio-only peer cannot turn a camera on
    bob.send({ type: 'media', audio: true, video: true, screenshare: false })
    assert.equal((await bob.next('error')).code, 'forbidden')
    // a third peer sees the media state as it is now
    const { client: carol, joined: cj } = await SignalClient.join(video.url, room, video.ticket({ room, uid: 3, username: 'carol' }))
    assert.equal(cj.peers.length, 2)
    assert.deepEqual(cj.peers.find((p: any) => p.user_id === 1).media, { audio: false, video: true, screenshare: true })

    bob.send({ type: 'leave' })
    assert.equal((await bob.closing()).code, 1000)
    assert.deepEqual(await alice.next('peer-left'), { type: 'peer-left', peer_id: bj.peer_id, user_id: 2 })
    assert.equal((await carol.next('peer-left')).peer_id, bj.peer_id)
    // a dropped connection is a leave too
    carol.ws.terminate()
    assert.equal((await alice.next('peer-left')).peer_id, cj.peer_id)
  })

  test('bad frames get error frames and change nothing; abuse closes the socket', async () => {
    const room = `r-${randomBytes(4).toString('hex')}`
    const { client: alice, joined: aj } = await SignalClient.join(video.url, room, video.ticket({ room, uid: 1 }))
    const { client: bob } = await SignalClient.join(video.url, room, video.ticket({ room, uid: 2 }))
    await alice.next('peer-joined')

    bob.send('{not json')
    assert.equal((await bob.next('error')).code, 'malformed')
    bob.send({ type: 'offer', to: aj.peer_id })
    assert.equal((await bob.next('error')).code, 'malformed')
    bob.send({ type: 'offer', to: aj.peer_id, sdp: SDP, extra: 1 })
    assert.equal((await bob.next('error')).code, 'malformed')
    bob.send({ type: 'dance' })
    assert.equal((await bob.next('error')).code, 'unknown_type')
    bob.send({ type: 'offer', to: 'nobody-in-this-room', sdp: SDP })
    assert.deepEqual(await bob.next('error'), { type: 'error', code: 'unknown_peer', message: 'No such peer in this room' })
    bob.send({ type: 'join', room_id: room, ticket: video.ticket({ room, uid: 2 }) })
    assert.equal((await bob.next('error')).code, 'already_joined')
    // an SDP over 64 KB (the frame itself under the frame cap)
    bob.send({ type: 'offer', to: aj.peer_id, sdp: 'a'.repeat(64 * 1024 + 1) })
    assert.equal((await bob.next('error')).code, 'too_large')
    // nothing reached alice; the socket still works (positive control)
    assert.deepEqual(await alice.drain('offer', 100), [])
    bob.send({ type: 'offer', to: aj.peer_id, sdp: SDP })
    assert.equal((await alice.next('offer')).sdp, SDP)

    // a frame over the frame cap closes the socket (1009)
    bob.send({ type: 'offer', to: aj.peer_id, sdp: 'a'.repeat(100 * 1024) })
    assert.equal((await bob.closing()).code, 1009)
    await alice.next('peer-left')

    // many bad frames close the socket (4008)
    const { client: carol } = await SignalClient.join(video.url, room, video.ticket({ room, uid: 3 }))
    for (let i = 0; i < 25; i++) carol.send({ type: 'offer', to: 'nobody-in-this-room', sdp: SDP })
    assert.equal((await carol.closing()).code, 4008)
  })

  test('the ICE configuration is served; TURN credentials only with a ticket', async () => {
    const turn = await startTestVideo({
      TURN_SECRET: 'turn-secret',
      TURN_URLS: 'turn:127.0.0.1:3478?transport=udp',
      STUN_URLS: 'stun:127.0.0.1:3478',
    })
    const plain = await (await fetch(`${turn.url}/video/integration/config`)).json()
    assert.deepEqual(plain, { success: true, data: { ice_servers: [{ urls: ['stun:127.0.0.1:3478'] }], ttl_seconds: 0 } })
    const withTicket = await (
      await fetch(`${turn.url}/video/integration/config`, { headers: { authorization: `Bearer ${turn.ticket({ room: '', uid: 42 })}` } })
    ).json()
    const server = withTicket.data.ice_servers[1]
    assert.deepEqual(server.urls, ['turn:127.0.0.1:3478?transport=udp'])
    assert.match(server.username, /^\d+:42$/)
    const forged = await fetch(`${turn.url}/video/integration/config`, {
      headers: {
        authorization: `Bearer ${signTicket(randomBytes(32), { room: '', uid: 42, username: 'x', exp: Date.now() + 1000, audio_only: false, cb: null })}`,
      },
    })
    assert.equal(forged.status, 401)
  })

  test('/asyncapi.json is a valid AsyncAPI 3 document naming every frame, and the frames on the wire match it', async () => {
    const document = await (await fetch(`${video.url}/asyncapi.json`)).json()
    const { document: parsed, diagnostics } = await new Parser().parse(JSON.stringify(document))
    assert.deepEqual(
      diagnostics.filter((d) => d.severity === 0).map((d) => `${d.path.join('.')}: ${d.message}`),
      [],
    )
    assert.ok(parsed)
    const names = new Set(
      parsed
        .messages()
        .all()
        .map((m) => m.name()),
    )
    for (const frame of ['join', 'offer', 'answer', 'ice-candidate', 'media', 'leave', 'joined', 'peer-joined', 'peer-left', 'error'])
      assert.ok(names.has(frame), frame)
    // real frames fit the schemas the document gives their types
    const ajv = new Ajv({ strict: false })
    const check = (prefix: string, frame: any) => {
      const schema = document.components.messages[`${prefix}.${frame.type}`].payload
      assert.ok(ajv.validate(schema, frame), `${prefix}.${frame.type}: ${ajv.errorsText()}`)
    }
    const room = `r-${randomBytes(4).toString('hex')}`
    const { client: a, joined: aj } = await SignalClient.join(video.url, room, video.ticket({ room, uid: 1 }))
    const { client: b, joined: bj } = await SignalClient.join(video.url, room, video.ticket({ room, uid: 2 }))
    const sent = [
      { type: 'offer', to: aj.peer_id, sdp: SDP },
      {
        type: 'ice-candidate',
        to: aj.peer_id,
        candidate: { candidate: 'candidate:1 1 udp 1 127.0.0.1 9 typ host', sdpMid: '0', sdpMLineIndex: 0 },
      },
      { type: 'media', audio: false, video: true, screenshare: false },
      { type: 'offer', to: 'nobody-in-this-room', sdp: SDP },
    ]
    for (const frame of sent) {
      check('client', frame)
      b.send(frame)
    }
    check('server', aj)
    check('server', bj)
    check('server', await a.next('peer-joined'))
    check('server', await a.next('offer'))
    check('server', await a.next('ice-candidate'))
    check('server', await a.next('media'))
    check('server', await b.next('error'))
    b.send({ type: 'leave' })
    check('server', await a.next('peer-left'))
  })
})

describe('two video instances on one Redis', {
  skip: testRedisUrl ? false : 'set TEST_REDIS_URL to run the shared-room test',
}, async () => {
  test('peers on different instances share a room: peer-joined, offer, answer, peer-left', async () => {
    const prefix = `tern-test-${randomBytes(6).toString('hex')}:`
    const one = await startTestVideo({ REDIS_URL: testRedisUrl!, REDIS_PREFIX: prefix })
    const two = await startTestVideo({ REDIS_URL: testRedisUrl!, REDIS_PREFIX: prefix })
    const room = `r-${randomBytes(4).toString('hex')}`
    const { client: alice, joined: aj } = await SignalClient.join(one.url, room, one.ticket({ room, uid: 1, username: 'alice' }))
    const { client: bob, joined: bj } = await SignalClient.join(two.url, room, two.ticket({ room, uid: 2, username: 'bob' }))
    assert.deepEqual(
      bj.peers.map((p: any) => p.peer_id),
      [aj.peer_id],
    )
    assert.equal((await alice.next('peer-joined')).peer.peer_id, bj.peer_id)
    bob.send({ type: 'offer', to: aj.peer_id, sdp: SDP })
    assert.deepEqual(await alice.next('offer'), { type: 'offer', from: bj.peer_id, from_user_id: 2, sdp: SDP })
    alice.send({ type: 'answer', to: bj.peer_id, sdp: SDP })
    assert.deepEqual(await bob.next('answer'), { type: 'answer', from: aj.peer_id, from_user_id: 1, sdp: SDP })
    alice.send({ type: 'media', audio: false, video: false, screenshare: false })
    assert.equal((await bob.next('media')).audio, false)
    bob.send({ type: 'leave' })
    assert.equal((await alice.next('peer-left')).peer_id, bj.peer_id)
    // a peer on one instance cannot reach a peer that left (unknown on both)
    alice.send({ type: 'offer', to: bj.peer_id, sdp: SDP })
    assert.equal((await alice.next('error')).code, 'unknown_peer')
  })

  test("a ticket used on one instance is refused on the other; a kick on one closes the user's sockets on both", async () => {
    const prefix = `tern-test-${randomBytes(6).toString('hex')}:`
    const one = await startTestVideo({ REDIS_URL: testRedisUrl!, REDIS_PREFIX: prefix })
    const two = await startTestVideo({ REDIS_URL: testRedisUrl!, REDIS_PREFIX: prefix })
    const room = `r-${randomBytes(4).toString('hex')}`
    const ticket = one.ticket({ room, uid: 7, username: 'gus' })
    const { client: first } = await SignalClient.join(one.url, room, ticket)
    const copy = await SignalClient.open(two.url)
    copy.send({ type: 'join', room_id: room, ticket })
    assert.equal((await copy.next('error')).code, 'unauthorized')
    assert.equal((await copy.closing()).code, 4001)
    // gus on the other instance too (a fresh ticket is let in), and hal who stays
    const { client: second } = await SignalClient.join(two.url, room, two.ticket({ room, uid: 7, username: 'gus' }))
    const { client: hal } = await SignalClient.join(one.url, room, one.ticket({ room, uid: 8, username: 'hal' }))

    const body = JSON.stringify({ room_id: room, user_id: 7, at: Date.now() })
    const kicked = await fetch(`${one.url}/internal/rooms/kick`, {
      method: 'POST',
      headers: { 'x-tern-video-signature': signBody(one.secret, body) },
      body,
    })
    assert.equal(kicked.status, 200)
    assert.deepEqual(await kicked.json(), { success: true, data: { kicked: 2 } })
    assert.equal((await first.closing()).code, 4010)
    assert.equal((await second.closing()).code, 4010)
    assert.deepEqual([(await hal.next('peer-left')).user_id, (await hal.next('peer-left')).user_id], [7, 7])
    assert.equal(hal.closed, null, 'the other user stays')
  })
})
