/**
 * The call page (GET /call, src/web/call-page.ts) in headless Chromium for the WebRTC browser
 * tests: a signed-in browser per user (the cookie session from POST /api/auth/login, as the login
 * form gets it; no token in the page), fake camera and microphone, and readers of what the page
 * shows and of its peer connections' statistics (window.ternCall.report()).
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import type { TestServer, TestUser } from '../harness/server.js'
import { openWatched } from '../web/watched-page.js'

export const CHROMIUM = '/usr/bin/chromium'
export const ARTIFACTS = 'test-artifacts'

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
    ],
  })
}

export interface PeerReport {
  peer_id: string
  user_id: number
  state: RTCPeerConnectionState
  framesDecoded: number
  local: string | null
  remote: string | null
}

export interface CallPage {
  user: TestUser
  context: BrowserContext
  page: Page
  /** console errors and page errors (a CSP violation is one) */
  problems: string[]
  /** the page's log lines (#call-log) */
  log(): Promise<string[]>
  status(): Promise<string>
  report(): Promise<PeerReport[]>
  /** waits until the page holds a connected peer connection to each of these users, and no other */
  connectedTo(userIds: number[], timeoutMs?: number): Promise<void>
  shot(name: string): Promise<void>
  close(): Promise<void>
}

/**
 * Signs `user` in with the cookie session (their registration's session, or `login: true` through
 * POST /api/auth/login) and opens /call (with `?relay=1` to force TURN).
 */
export async function openCallPage(
  browser: Browser,
  server: TestServer,
  user: TestUser,
  options: { relay?: boolean; login?: boolean } = {},
): Promise<CallPage> {
  const { context, page, problems } = await openWatched(browser, { baseURL: server.url, viewport: { width: 900, height: 700 } })
  if (options.login) {
    const login = await context.request.post('/api/auth/login', {
      data: { login: user.username, password: user.password, device: 'call page test' },
    })
    assert.equal(login.status(), 200, await login.text())
    assert.ok(
      (await context.cookies()).some((c) => c.name === 'tern_session' && c.httpOnly),
      'the HttpOnly session cookie is set',
    )
  } else {
    // the session the user registered with, as the HttpOnly cookie a login sets (one password hash fewer per page)
    await context.addCookies([{ name: 'tern_session', value: user.token, url: server.url, httpOnly: true, sameSite: 'Lax' }])
  }
  // small video: six encoders and decoders at once on a shared two-core machine
  await page.goto(options.relay ? '/call?relay=1&video=low' : '/call?video=low')
  await page.locator('#call[data-gateway="open"]').waitFor({ state: 'attached', timeout: 10_000 })
  const handle: CallPage = {
    user,
    context,
    page,
    problems,
    log: async () => (await page.locator('#call-log li').allTextContents()).map((t) => t.trim()),
    status: async () => ((await page.locator('#call-status').textContent()) ?? '').trim(),
    report: () => page.evaluate(() => (window as unknown as { ternCall: { report(): Promise<PeerReport[]> } }).ternCall.report()),
    async connectedTo(userIds, timeoutMs = 30_000) {
      const want = [...userIds].sort((a, b) => a - b).join(',')
      const deadline = Date.now() + timeoutMs
      let last: PeerReport[] = []
      for (;;) {
        last = await handle.report()
        const connected = last
          .filter((r) => r.state === 'connected')
          .map((r) => r.user_id)
          .sort((a, b) => a - b)
          .join(',')
        if (connected === want && last.length === userIds.length) {
          if (process.env.TEST_CALL_TIMING)
            console.log(`# ${user.username} connected to [${want}] after ${timeoutMs - (deadline - Date.now())} ms`)
          return
        }
        if (Date.now() > deadline) {
          await handle.shot(`call-timeout-${user.username}`).catch(() => undefined)
          assert.fail(
            `${user.username}: wanted connected peers [${want}], have ${JSON.stringify(last)}; log: ${JSON.stringify(await handle.log())}`,
          )
        }
        await page.waitForTimeout(200)
      }
    },
    async shot(name) {
      fs.mkdirSync(ARTIFACTS, { recursive: true })
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) })
    },
    close: () => context.close(),
  }
  return handle
}

/** Every peer connection of `page` decodes video frames, and more of them a moment later. */
export async function assertFramesFlow(page: CallPage) {
  const first = await page.report()
  assert.ok(first.length > 0, `${page.user.username} has peer connections`)
  const deadline = Date.now() + 10_000
  for (;;) {
    await page.page.waitForTimeout(500)
    const now = await page.report()
    const grown = first.every((before) => {
      const after = now.find((r) => r.peer_id === before.peer_id)
      return after !== undefined && after.framesDecoded > before.framesDecoded && after.framesDecoded > 0
    })
    if (grown) return now
    if (Date.now() > deadline)
      assert.fail(`${page.user.username}: framesDecoded did not grow: ${JSON.stringify(first)} → ${JSON.stringify(now)}`)
  }
}

/** CSP violations and other console errors, for the assertion that there were none. */
export const cspProblems = (page: CallPage) => page.problems.filter((p) => /content security policy|refused to/i.test(p))
