/**
 * TURN with a real coturn (use-auth-secret): the credentials Tern issues in a room's ICE
 * configuration allocate a relay; the same scheme with an expiry in the past, or a wrong
 * credential, does not. Without the turnserver binary the test is skipped loudly, unless
 * TEST_REQUIRE_COTURN=1 (CI), where it fails.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { turnCredentials } from '../../src/video/ice.js'
import { registerUsers, V2 } from '../harness/messaging.js'
import { startTestServer } from '../harness/server.js'
import { startTestVideo, TEST_VIDEO_SECRET } from '../harness/signal.js'
import { allocate, coturnInstalled, startCoturn, TURNSERVER } from '../harness/turn.js'

const required = process.env.TEST_REQUIRE_COTURN === '1'
const missing = !coturnInstalled()
if (missing) {
  const line = `${TURNSERVER} is missing: the TURN test is ${required ? 'FAILING (TEST_REQUIRE_COTURN=1)' : 'SKIPPED'} — install the Debian package coturn`
  console.warn(`\n!!! ${line}\n`)
}

test('credentials from a room join allocate a relay on coturn; expired ones are refused', {
  skip: missing && !required ? 'turnserver not installed (apt-get install coturn)' : false,
}, async () => {
  assert.ok(!missing, `${TURNSERVER} is required (TEST_REQUIRE_COTURN=1)`)
  const secret = 'coturn shared secret for the test'
  const coturn = await startCoturn(secret)
  const turnUrl = `turn:127.0.0.1:${coturn.port}?transport=udp`
  const video = await startTestVideo({ TURN_SECRET: secret, TURN_URLS: turnUrl })
  const server = await startTestServer({
    env: { VIDEO_URL: video.url, VIDEO_SECRET: TEST_VIDEO_SECRET, TURN_SECRET: secret, TURN_URLS: turnUrl },
  })
  const [ann] = await registerUsers(server, 1)
  const room = (await ann.api.post(`${V2}/calls/rooms`, {})).body.data
  const joined = await ann.api.post(`${V2}/calls/rooms/${room.room_id}/join`, {})
  assert.equal(joined.status, 200, joined.text)
  const turn = joined.body.data.ice.ice_servers.find((s: any) => s.urls.includes(turnUrl))
  assert.ok(turn, JSON.stringify(joined.body.data.ice))

  const granted = await allocate(coturn.port, turn.username, turn.credential)
  assert.equal(granted.ok, true, `${JSON.stringify(granted)}\n${coturn.log().slice(-2000)}`)
  assert.match((granted as { relayed: string }).relayed, /^127\.0\.0\.1:\d+$/)

  // the same user's credentials with an expiry in the past: refused
  const expired = turnCredentials(secret, ann.id, Math.floor(Date.now() / 1000) - 60)
  const refused = await allocate(coturn.port, expired.username, expired.credential)
  assert.deepEqual([refused.ok, (refused as { code: number }).code], [false, 401])
  // a wrong credential: refused
  const wrong = await allocate(coturn.port, turn.username, 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=')
  assert.deepEqual([wrong.ok, (wrong as { code: number }).code], [false, 401])

  // the proxied ICE configuration carries working credentials too
  const proxied = await ann.api.get('/video/integration/config')
  const viaProxy = proxied.body.data.ice_servers.find((s: any) => s.urls.includes(turnUrl))
  assert.equal((await allocate(coturn.port, viaProxy.username, viaProxy.credential)).ok, true)
})
