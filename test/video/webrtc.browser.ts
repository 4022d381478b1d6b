/**
 * WebRTC proof in real browsers, loaded by webrtc.browser.test.ts when Chromium
 * is there. Headless Chromium pages with fake camera and microphone open Tern's call page (/call)
 * signed in with the cookie session (one through the login API, the others with their
 * registration's session as the cookie): one user calls another (V2/calls/start), the other answers on
 * the page, both do offer/answer/ICE through the video signaling service and reach
 * connectionState "connected" with growing framesDecoded; the same through a real coturn with
 * iceTransportPolicy "relay" (the selected candidate pair is relay on both sides); three pages in
 * a room form a full mesh and see a leaving page as peer-left. Screenshots: test-artifacts/webrtc-*.png.
 */
import assert from 'node:assert/strict'
import test, { after } from 'node:test'
import type { Browser } from 'playwright-core'
import { V2 } from '../harness/messaging.js'
import { startTestServer, type TestServer, type TestUser } from '../harness/server.js'
import { startTestVideo, TEST_VIDEO_SECRET } from '../harness/signal.js'
import { coturnInstalled, startCoturn, TURNSERVER } from '../harness/turn.js'
import { waitFor } from '../harness/wait.js'
import { assertFramesFlow, cspProblems, launchChromium, openCallPage, type CallPage } from './call-pages.js'

const requireCoturn = process.env.TEST_REQUIRE_COTURN === '1'
const haveCoturn = coturnInstalled()
if (!haveCoturn)
  console.warn(
    `\n!!! ${TURNSERVER} is missing: the relay run is ${requireCoturn ? 'FAILING (TEST_REQUIRE_COTURN=1)' : 'SKIPPED'} — install the Debian package coturn\n`,
  )

const TURN_SECRET = 'coturn secret for the browser test'
const coturn = haveCoturn ? await startCoturn(TURN_SECRET) : null
// coturn answers STUN too; without it, a STUN address nobody answers (the pages still have host candidates)
const iceEnv: Record<string, string> = coturn
  ? { STUN_URLS: `stun:127.0.0.1:${coturn.port}`, TURN_URLS: `turn:127.0.0.1:${coturn.port}?transport=udp`, TURN_SECRET }
  : { STUN_URLS: 'stun:127.0.0.1:9' }
const video = await startTestVideo(iceEnv)
const server: TestServer = await startTestServer({ env: { VIDEO_URL: video.url, VIDEO_SECRET: TEST_VIDEO_SECRET, ...iceEnv } })
const browser: Browser = await launchChromium()
after(() => browser.close())

/** TEST_CALL_TIMING=1: how long each step took (to keep the file's runtime small) */
let mark = Date.now()
const step = (what: string) => {
  if (process.env.TEST_CALL_TIMING) console.log(`# ${what}: ${Date.now() - mark} ms`)
  mark = Date.now()
}

const pages: CallPage[] = []
after(() => Promise.all(pages.map((p) => p.close().catch(() => undefined))))
async function open(user: TestUser, options: { relay?: boolean; login?: boolean } = {}) {
  const page = await openCallPage(browser, server, user, options)
  pages.push(page)
  return page
}

/** `caller` calls `callee` from the page; the callee's page rings and answers it there. */
async function callAndAnswer(caller: CallPage, callee: CallPage) {
  await caller.page.getByLabel('User id to call').fill(String(callee.user.id))
  await caller.page.getByRole('button', { name: 'Call', exact: true }).click()
  const incoming = callee.page.locator('#call-incoming')
  await incoming.waitFor({ state: 'visible', timeout: 10_000 })
  assert.match((await incoming.textContent()) ?? '', new RegExp(`Incoming video call from ${caller.user.username}`))
  await callee.page.getByRole('button', { name: 'Answer' }).click()
  await caller.connectedTo([callee.user.id])
  await callee.connectedTo([caller.user.id])
  for (const page of [caller, callee]) assert.equal(await page.status(), 'Connected with 1 person')
}

async function hangUp(caller: CallPage, callee: CallPage) {
  await caller.page.getByRole('button', { name: 'Hang up' }).click()
  await waitFor(async () => ((await callee.status()) === 'Call ended' ? true : undefined), {
    timeoutMs: 5000,
    message: 'the callee sees the call end',
  })
  await waitFor(async () => ((await callee.report()).length === 0 ? true : undefined), {
    timeoutMs: 5000,
    message: "the callee's peer connection closed",
  })
}

test('a 1:1 call between two browsers: rung, answered, connected directly, frames decoded both ways', async () => {
  const [ann, bob] = [await server.registerUser(), await server.registerUser()]
  // ann signs in through the login API (the cookie it sets), bob with his registration's session
  const [annPage, bobPage] = await Promise.all([open(ann, { login: true }), open(bob)])
  await callAndAnswer(annPage, bobPage)
  const [annStats, bobStats] = [await assertFramesFlow(annPage), await assertFramesFlow(bobPage)]
  // no relay was needed: the pair is host (or srflx) candidates
  for (const r of [...annStats, ...bobStats]) assert.notEqual(r.local, 'relay', JSON.stringify(r))
  await annPage.shot('webrtc-call-caller')
  await bobPage.shot('webrtc-call-callee')

  const call = (await ann.api.get(`${V2}/calls/history`)).body.items[0]
  assert.deepEqual([call.peer.user_id, call.direction, call.status], [bob.id, 'outgoing', 'answered'])
  await hangUp(annPage, bobPage)
  assert.equal((await ann.api.get(`${V2}/calls/history`)).body.items[0].status, 'ended')
  assert.deepEqual([...cspProblems(annPage), ...cspProblems(bobPage)], [], 'no CSP violation')
  assert.deepEqual([...annPage.problems, ...bobPage.problems], [], 'no console error')
})

test('the same call forced through TURN (iceTransportPolicy relay): the selected pair is relay on both sides', {
  skip: !haveCoturn && !requireCoturn ? 'turnserver not installed (apt-get install coturn)' : false,
}, async () => {
  assert.ok(coturn, `${TURNSERVER} is required (TEST_REQUIRE_COTURN=1)`)
  const [cat, dan] = [await server.registerUser(), await server.registerUser()]
  const [catPage, danPage] = await Promise.all([open(cat, { relay: true }), open(dan, { relay: true })])
  await callAndAnswer(catPage, danPage)
  const [catStats, danStats] = [await assertFramesFlow(catPage), await assertFramesFlow(danPage)]
  for (const r of [...catStats, ...danStats]) assert.deepEqual([r.local, r.remote], ['relay', 'relay'], JSON.stringify(r))
  await catPage.shot('webrtc-call-relay')
  await hangUp(catPage, danPage)
  assert.deepEqual([...catPage.problems, ...danPage.problems], [], 'no console error')
})

test('three pages in a room form a full mesh; a page that leaves is peer-left for the others', async () => {
  const users = [await server.registerUser(), await server.registerUser(), await server.registerUser()]
  const room = (await users[0].api.post(`${V2}/calls/rooms`, { call_type: 'video' })).body.data
  step('mesh: start')
  const trio = await Promise.all(users.map((u) => open(u)))
  step('mesh: three pages open')
  // all three join at once: each pair still has one offerer (the one that was there first)
  await Promise.all(
    trio.map(async (page) => {
      await page.page.getByLabel('Room id').fill(room.room_id)
      await page.page.getByRole('button', { name: 'Join room' }).click()
      await page.page.locator(`#call[data-signal="joined"][data-room="${room.room_id}"]`).waitFor({ state: 'attached', timeout: 10_000 })
    }),
  )
  step('mesh: joined')
  for (const [i, page] of trio.entries()) await page.connectedTo(users.filter((_, j) => j !== i).map((u) => u.id))
  for (const page of trio) assert.equal(await page.status(), 'Connected with 2 people')
  step('mesh: connected')
  for (const page of trio) await assertFramesFlow(page)
  step('mesh: frames')
  await trio[0].shot('webrtc-room-mesh')
  step('mesh: screenshot')
  const present = (await users[0].api.get(`${V2}/calls/rooms/${room.room_id}/participants`)).body.items
  assert.deepEqual(present.map((p: any) => [p.user_id, p.connected]).sort(), users.map((u) => [u.id, true]).sort())

  // the third page leaves
  const leaver = users[2]
  await trio[2].page.getByRole('button', { name: 'Hang up' }).click()
  for (const page of trio.slice(0, 2)) {
    await waitFor(async () => ((await page.log()).includes(`peer-left ${leaver.id}`) ? true : undefined), {
      timeoutMs: 5000,
      message: `${page.user.username} sees peer-left`,
    })
    await page.connectedTo(
      users
        .slice(0, 2)
        .filter((u) => u.id !== page.user.id)
        .map((u) => u.id),
      5000,
    )
  }
  step('mesh: peer-left seen')
  // the other two are still connected to each other (positive control beside the peer-left)
  await assertFramesFlow(trio[0])
  await waitFor(
    async () => {
      const rows = (await users[0].api.get(`${V2}/calls/rooms/${room.room_id}/participants`)).body.items
      return rows.find((p: any) => p.user_id === leaver.id)?.left_at ? rows : undefined
    },
    { timeoutMs: 5000, message: 'the main service records the leave' },
  )
  step('mesh: end')
  for (const page of trio) assert.deepEqual(page.problems, [], `${page.user.username}: no console error`)
})
