/**
 * Per-user caps: joined signaling sockets per user per room (VIDEO_MAX_SOCKETS_PER_ROOM, 4) and
 * per user on one video service (VIDEO_MAX_SOCKETS_PER_USER, 16), the next refused with 4029;
 * room tickets per user (VIDEO_TICKET_RATE_LIMIT, 429 with Retry-After); media frames per socket
 * (VIDEO_MEDIA_RATE_LIMIT: an error frame, not a close); media reports coalesced per socket; and
 * media reports the main service writes per participant (VIDEO_MEDIA_REPORT_RATE_LIMIT, 429).
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, test } from 'node:test'
import { videoSecret } from '../../src/video/secret.js'
import { SIGNATURE_HEADER, signBody } from '../../src/video/ticket.js'
import { registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { SignalClient, startTestVideo, TEST_VIDEO_SECRET } from '../harness/signal.js'
import { sleep } from '../harness/wait.js'

const video = await startTestVideo()
const room = () => `r-${randomBytes(5).toString('hex')}`
const open = (roomId: string, uid: number) => SignalClient.join(video.url, roomId, video.ticket({ room: roomId, uid }))
const refusedJoin = async (roomId: string, uid: number) => {
  const socket = await SignalClient.open(video.url)
  socket.send({ type: 'join', room_id: roomId, ticket: video.ticket({ room: roomId, uid }) })
  assert.equal((await socket.next('error')).code, 'too_many_sockets')
  assert.equal((await socket.closing()).code, 4029)
}
let nextUser = 1000
const userId = () => ++nextUser

test('a user may hold 4 joined sockets in one room; the fifth is refused with 4029 until one closes', async () => {
  const r = room()
  const me = userId()
  const mine = []
  for (let i = 0; i < 4; i++) mine.push((await open(r, me)).client)
  await refusedJoin(r, me)
  // positive controls: another user in the room, and the same user in another room, are let in
  const { client: other } = await open(r, userId())
  const { client: elsewhere } = await open(room(), me)
  // the other peers heard of none of the refused sockets: the room has 4 + 1 peers
  const { joined } = await open(r, userId())
  assert.equal(joined.peers.length, 5)
  // a socket closes: a new one is let in again
  await mine[0].close()
  await sleep(50)
  const { client: again } = await open(r, me)
  await Promise.all([...mine, other, elsewhere, again].map((c) => c.close()))
})

test('a user may hold 16 joined sockets on one video service; the seventeenth is refused with 4029', async () => {
  const me = userId()
  const rooms = [room(), room(), room(), room()]
  const mine = []
  for (const r of rooms) for (let i = 0; i < 4; i++) mine.push((await open(r, me)).client)
  await refusedJoin(room(), me)
  // positive control: another user still gets in
  const { client: other } = await open(room(), userId())
  await Promise.all([...mine, other].map((c) => c.close()))
})

test('media frames over 10 a second get a rate_limited error frame and are dropped; the socket stays open', async () => {
  const r = room()
  const { client: alice } = await open(r, userId())
  const { client: bob } = await open(r, userId())
  await alice.next('peer-joined')
  for (let i = 0; i < 15; i++) alice.send({ type: 'media', audio: i % 2 === 0, video: true, screenshare: false })
  const errors = await alice.drain('error', 300)
  assert.ok(errors.length >= 5, `${errors.length} refusals`)
  assert.ok(errors.every((e) => e.code === 'rate_limited'))
  const told = await bob.drain('media', 0)
  assert.ok(told.length >= 1 && told.length <= 10, `${told.length} media frames relayed`)
  assert.equal(alice.closed, null)
  // positive control: the next second's frames go through
  await sleep(1000)
  alice.send({ type: 'media', audio: false, video: false, screenshare: true })
  assert.equal((await bob.next('media')).screenshare, true)
  await Promise.all([alice.close(), bob.close()])
})

test('media state is reported to the main service coalesced: a burst becomes a few reports, the last with the final state', async () => {
  const reports: any[] = []
  const main = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      reports.push(JSON.parse(body))
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true,"data":{"applied":true}}')
    })
  })
  await new Promise<void>((resolve) => main.listen(0, '127.0.0.1', resolve))
  after(() => new Promise<void>((resolve) => main.close(() => resolve())))
  const cb = `http://127.0.0.1:${(main.address() as AddressInfo).port}`
  const r = room()
  const me = userId()
  const { client } = await SignalClient.join(video.url, r, video.ticket({ room: r, uid: me, cb }))
  for (let i = 0; i < 8; i++) client.send({ type: 'media', audio: true, video: true, screenshare: i % 2 === 0 })
  client.send({ type: 'ping' })
  await client.next('pong')
  await sleep(700)
  const media = reports.filter((r) => r.event === 'media')
  assert.ok(media.length >= 1 && media.length <= 3, `${media.length} media reports for 8 frames`)
  assert.deepEqual(media.at(-1).media, { audio: true, video: true, screenshare: false })
  // positive control: a later change is reported too
  client.send({ type: 'media', audio: false, video: true, screenshare: true })
  for (let i = 0; i < 20 && reports.filter((r) => r.event === 'media').length === media.length; i++) await sleep(50)
  assert.deepEqual(reports.filter((r) => r.event === 'media').at(-1).media, { audio: false, video: true, screenshare: true })
  await client.close()
})

test('room tickets per user are limited (429 rate_limited with Retry-After); other users are not affected', async () => {
  const server = await startTestServer({ env: { VIDEO_URL: video.url, VIDEO_SECRET: TEST_VIDEO_SECRET, VIDEO_TICKET_RATE_LIMIT: '3/60' } })
  const [ann, bob] = await registerUsers(server, 2)
  const created = await ann.api.post(`${V2}/calls/rooms`, {})
  const roomId = created.body.data.room_id
  for (let i = 0; i < 3; i++) assert.equal((await ann.api.post(`${V2}/calls/rooms/${roomId}/join`, {})).status, 200)
  const over = await ann.api.post(`${V2}/calls/rooms/${roomId}/join`, {})
  assert.equal(over.status, 429, over.text)
  assert.equal(over.body.error.code, 'rate_limited')
  assert.ok(Number(over.headers.get('retry-after')) >= 1)
  // positive control: bob's tickets are his own
  assert.equal((await bob.api.post(`${V2}/calls/rooms/${roomId}/join`, {})).status, 200)
})

test('the main service writes at most VIDEO_MEDIA_REPORT_RATE_LIMIT media reports per participant; the rest are answered 429', async () => {
  const server = await startTestServer({
    env: { VIDEO_URL: video.url, VIDEO_SECRET: TEST_VIDEO_SECRET, VIDEO_MEDIA_REPORT_RATE_LIMIT: '3/60' },
  })
  const [ann, bob] = await registerUsers(server, 2)
  const roomId = (await ann.api.post(`${V2}/calls/rooms`, {})).body.data.room_id
  for (const user of [ann, bob]) assert.equal((await user.api.post(`${V2}/calls/rooms/${roomId}/join`, {})).status, 200)
  const post = async (report: Record<string, unknown>) => {
    const body = JSON.stringify({ room_id: roomId, at: Date.now(), ...report })
    const res = await fetch(`${server.url}/internal/video/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(videoSecret(server.ctx.config), body) },
      body,
    })
    return { status: res.status, body: await res.json() }
  }
  const media = (user: number, screenshare: boolean) =>
    post({ event: 'media', user_id: user, peer_id: `peer-${user}`, media: { audio: true, video: true, screenshare } })
  for (const user of [ann, bob]) assert.equal((await post({ event: 'join', user_id: user.id, peer_id: `peer-${user.id}` })).status, 200)
  for (let i = 0; i < 3; i++) assert.equal((await media(ann.id, i === 2)).status, 200)
  const over = await media(ann.id, false)
  assert.equal(over.status, 429)
  assert.equal(over.body.error.code, 'rate_limited')
  // not written: ann is still recorded as sharing her screen
  const listed = async () => (await bob.api.get(`${V2}/calls/rooms/${roomId}/participants`)).body.items as any[]
  assert.equal((await listed()).find((p) => p.user_id === ann.id).screensharing, true)
  // positive control: bob, another participant, is recorded
  assert.equal((await media(bob.id, true)).status, 200)
  assert.equal((await listed()).find((p) => p.user_id === bob.id).screensharing, true)
})
