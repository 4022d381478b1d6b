/**
 * The web client's sign-in pages in headless Chromium (playwright-core, system /usr/bin/chromium):
 * the login form signs in under the pages' strict CSP with no console error, the QR code beside it
 * (login.js) appears and, once a signed-in device approves it, signs the browser in; an invite
 * page's Join button joins and opens the chat. Loaded by login.browser.test.ts.
 */
import assert from 'node:assert/strict'
import test from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchChromium } from './with-chromium.js'
import { startTestServer } from '../harness/server.js'
import { openWatched } from './watched-page.js'

const V2 = '/api.v2/api'
const server = await startTestServer()
const browser: Browser = await launchChromium()

async function open(): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  return openWatched(browser, { baseURL: server.url })
}

/** Where a sign-in lands: /app (whatever the app serves there). */
const atApp = (page: Page) => page.waitForURL((url) => url.pathname.startsWith('/app'), { timeout: 10_000 })

test('the login form signs in: the HttpOnly cookie is set, the page had no console error or CSP violation', async () => {
  const user = await server.registerUser()
  const { context, page, problems } = await open()
  try {
    await page.goto('/login')
    await page.getByLabel('Username or email').fill(user.username)
    await page.getByLabel('Password', { exact: true }).fill(user.password)
    const loginProblems = [...problems]
    await Promise.all([atApp(page), page.getByRole('button', { name: 'Sign in' }).click()])
    const cookie = (await context.cookies()).find((c) => c.name === 'tern_session')
    assert.ok(cookie, 'tern_session stored')
    assert.equal(cookie.httpOnly, true)
    assert.equal(cookie.sameSite, 'Lax')
    assert.deepEqual(loginProblems, [], 'the login page loaded cleanly')
    const session = await page.request.get('/api/web/session')
    assert.equal(session.status(), 200)
    assert.equal((await session.json()).data.user.id, user.id)
  } finally {
    await context.close()
  }
})

test('the QR code beside the form appears, and approving it from a signed-in device signs the browser in', async () => {
  const user = await server.registerUser()
  const { context, page, problems } = await open()
  try {
    const generated = page.waitForResponse((res) => res.url().endsWith('/api/auth/qr/generate'))
    await page.goto('/login')
    const token: string = (await (await generated).json()).data.token
    await page.locator('#qr-login figure img').waitFor({ state: 'visible', timeout: 10_000 })
    assert.match((await page.locator('#qr-login .qr-state').textContent()) ?? '', /Scan this code/)
    assert.deepEqual(problems, [], 'no console error, no CSP violation')
    // the phone: scans, then approves
    assert.equal((await user.api.post(`${V2}/auth/qr/request`, { token })).status, 200)
    assert.equal((await user.api.post(`${V2}/auth/qr/authorize`, { token })).status, 200)
    // the browser names the account that approved, and signs in only when told to
    const signIn = page.locator('#qr-login [data-qr="login"]')
    await signIn.waitFor({ state: 'visible', timeout: 10_000 })
    assert.match((await page.locator('#qr-login .qr-state').textContent()) ?? '', new RegExp(`Approved by @${user.username}`))
    assert.equal(await signIn.textContent(), `Sign in as @${user.username}`)
    await signIn.click()
    await atApp(page)
    assert.ok((await context.cookies()).some((c) => c.name === 'tern_session' && c.httpOnly))
    assert.equal((await page.request.get('/api/web/session')).status(), 200)
  } finally {
    await context.close()
  }
})

test('an invite page: signed out it leads to the login, which comes back; Join joins and opens the chat', async () => {
  const owner = await server.registerUser()
  const joiner = await server.registerUser()
  const group = await owner.api.post(`${V2}/groups/create`, { title: 'Browser group' })
  const chatId = group.body.data.group_id ?? group.body.data.chat_id
  const { code } = (await owner.api.post(`${V2}/groups/invite-link/create`, { chat_id: chatId })).body.data
  const { context, page, problems } = await open()
  try {
    await page.goto(`/join/${code}`)
    assert.equal(await page.locator('h1').textContent(), 'Browser group')
    await page.getByRole('link', { name: 'Sign in to join' }).click()
    await page.getByLabel('Username or email').fill(joiner.username)
    await page.getByLabel('Password', { exact: true }).fill(joiner.password)
    await Promise.all([page.waitForURL(`**/join/${code}`), page.getByRole('button', { name: 'Sign in' }).click()])
    await Promise.all([page.waitForURL(`**/app/chat/${chatId}`), page.getByRole('button', { name: 'Join the group' }).click()])
    const members = await owner.api.get(`${V2}/groups/members`, { query: { chat_id: chatId } })
    assert.ok(JSON.stringify(members.body).includes(`"${joiner.username}"`), 'joined')
    assert.deepEqual(
      problems.filter((p) => /content security policy|refused to/i.test(p)),
      [],
    )
  } finally {
    await context.close()
  }
})
