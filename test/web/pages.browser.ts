/**
 * V1 pages and the API docs in a real headless Chromium (playwright-core, system /usr/bin/chromium).
 * Catches what HTTP-level tests cannot: Content Security Policy blocking Swagger UI's scripts or
 * styles, pages that throw, cookies the browser refuses.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import test from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchChromium } from './with-chromium.js'
import { startTestServer } from '../harness/server.js'
import { openWatched } from './watched-page.js'

const server = await startTestServer()
/** A non-loopback host name for the same server: browsers treat loopback specially (secure context, no upgrades). */
const LAN_HOST = 'tern.test'
const port = new URL(server.url).port

const browser: Browser = await launchChromium([`--host-resolver-rules=MAP ${LAN_HOST} 127.0.0.1`])

/**
 * Chromium's notice that Cross-Origin-Opener-Policy is ignored on an untrustworthy (plain-http,
 * non-loopback) origin. Harmless; tolerated so the LAN-host tests pinpoint real breakage.
 */
const COOP_NOTICE = /Cross-Origin-Opener-Policy header has been ignored/

interface Watched {
  context: BrowserContext
  page: Page
  /** console errors and uncaught page errors, as text */
  problems: string[]
  /** requests that failed or were blocked */
  failedRequests: string[]
}

async function openPage(): Promise<Watched> {
  const { context, page, problems } = await openWatched(browser, { baseURL: server.url })
  const failedRequests: string[] = []
  page.on('requestfailed', (request) => failedRequests.push(`${request.url()} (${request.failure()?.errorText})`))
  return { context, page, problems, failedRequests }
}

test('the landing page renders with the title Tern and a working link to /docs', async () => {
  await assertLandingRenders('/')
})

test('the landing page link to /docs works on a plain-http, non-loopback host name too', async () => {
  await assertLandingRenders(`http://${LAN_HOST}:${port}/`)
})

async function assertLandingRenders(url: string) {
  const { context, page, problems, failedRequests } = await openPage()
  try {
    const res = await page.goto(url)
    assert.equal(res?.status(), 200)
    assert.equal(await page.title(), 'Tern')
    assert.equal(await page.locator('h1').textContent(), 'Tern')
    const docs = page.locator('a[href="/docs"]')
    assert.equal(await docs.count(), 1)
    assert.ok(await docs.isVisible())
    assert.equal((await docs.textContent())?.trim(), 'API documentation')
    await docs.click()
    // wherever the click leads (a refused https upgrade lands on chrome-error://)
    await page.waitForURL((u) => u.href !== res!.url(), { timeout: 10_000 }).catch(() => {})
    await page.waitForLoadState()
    assert.equal(
      page.url(),
      new URL('/docs', res!.url()).toString(),
      `the link opens /docs on the same origin; failed requests: ${JSON.stringify(failedRequests)}`,
    )
    await page.waitForSelector('.swagger-ui', { timeout: 10_000 })
    assert.deepEqual(
      problems.filter((p) => !COOP_NOTICE.test(p)),
      [],
    )
  } finally {
    await context.close()
  }
}

async function assertDocsRender(url: string) {
  const { context, page, problems, failedRequests } = await openPage()
  try {
    const res = await page.goto(url)
    assert.equal(res?.status(), 200)
    const register = page.locator('.opblock-summary-path', { hasText: '/api.v2/api/auth/register' }).first()
    try {
      await page.waitForSelector('.swagger-ui', { timeout: 10_000 })
      await register.waitFor({ state: 'visible', timeout: 10_000 })
    } catch (error) {
      const csp = res?.headers()['content-security-policy']
      assert.fail(
        `Swagger UI did not render at ${url}: ${(error as Error).message.split('\n')[0]}\n` +
          `problems: ${JSON.stringify(problems)}\nfailed requests: ${JSON.stringify(failedRequests)}\nCSP: ${csp}`,
      )
    }
    assert.ok(await register.isVisible())
    // Swagger UI's own styles applied (a blocked stylesheet leaves the blocks unstyled)
    const opblock = page.locator('.opblock-post').first()
    const border = await opblock.evaluate((el) => getComputedStyle(el).borderTopStyle)
    assert.equal(border, 'solid', 'swagger-ui.css is applied')
    assert.equal(await page.locator('.opblock-summary-path', { hasText: '/api.v3/' }).count(), 0, 'V3 is hidden')
    await page.waitForTimeout(300)
    assert.deepEqual(
      problems.filter((p) => /content security policy|refused to/i.test(p)),
      [],
      'no CSP violations',
    )
    assert.deepEqual(
      problems.filter((p) => !COOP_NOTICE.test(p)),
      [],
      'no console errors or page errors',
    )
    assert.deepEqual(failedRequests, [], 'no failed requests')
  } finally {
    await context.close()
  }
}

test('/docs renders Swagger UI with the operations and no CSP violations or console errors', async () => {
  await assertDocsRender('/docs')
})

test('/docs renders on a plain-http, non-loopback host name too (no forced https upgrade of its assets)', async () => {
  await assertDocsRender(`http://${LAN_HOST}:${port}/docs`)
})

test('/docs "Try it out" works at the address the README gives (127.0.0.1): GET /health answers 200', async () => {
  const { context, page, problems } = await openPage()
  try {
    await page.goto('/docs')
    // the list is long (Swagger UI renders it as it scrolls): filter by the tag, as a reader would
    await page.locator('input.operation-filter-input').fill('service')
    const health = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path', { hasText: /^\/health$/ }) }).first()
    await health.waitFor({ state: 'visible', timeout: 10_000 })
    await health.locator('.opblock-summary').click()
    await health.locator('button.try-out__btn').click()
    await health.locator('button.execute').click()
    const status = health.locator('.live-responses-table tbody .response-col_status').first()
    await status.waitFor({ state: 'visible', timeout: 10_000 })
    fs.mkdirSync('test-artifacts', { recursive: true })
    await page.screenshot({ path: 'test-artifacts/docs-try-it-out.png', fullPage: false })
    assert.equal((await status.textContent())?.trim(), '200')
    assert.match(
      (await health.locator('.live-responses-table tbody .response-col_description').first().textContent()) ?? '',
      /"status": "ok"/,
    )
    assert.deepEqual(
      problems.filter((p) => /content security policy|refused to/i.test(p)),
      [],
      'no CSP violation',
    )
  } finally {
    await context.close()
  }
})

test('the V1 cookie session in a browser: /api/auth/login stores tern_session (HttpOnly, SameSite=Lax); /logout clears it', async () => {
  const user = await server.registerUser()
  const { context, page } = await openPage()
  try {
    await page.goto('/')
    // the login response's Set-Cookie lands in the context's cookie jar, as a browser form would
    const login = await page.request.post('/api/auth/login', { data: { login: user.username, password: user.password } })
    assert.equal(login.status(), 200)
    const session = (await context.cookies()).find((c) => c.name === 'tern_session')
    assert.ok(session, 'the browser stored tern_session')
    assert.equal(session.httpOnly, true)
    assert.equal(session.sameSite, 'Lax')
    assert.equal(session.secure, false)
    assert.equal(await page.evaluate(() => document.cookie.includes('tern_session')), false, 'HttpOnly: invisible to scripts')
    const who = await page.request.get('/api/get_user_id')
    assert.equal(who.status(), 204)
    assert.equal(who.headers()['x-user-id'], String(user.id))

    await page.goto('/logout')
    assert.equal(page.url(), `${server.url}/logout`, 'a GET only shows the sign-out page')
    assert.equal((await page.request.get('/api/get_user_id')).status(), 204, 'still signed in')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(`${server.url}/`)
    assert.equal(page.url(), `${server.url}/`)
    assert.equal(await page.title(), 'Tern')
    assert.equal(
      (await context.cookies()).find((c) => c.name === 'tern_session'),
      undefined,
      'cookie cleared',
    )
    assert.equal((await page.request.get('/api/get_user_id')).status(), 401)
  } finally {
    await context.close()
  }
})
