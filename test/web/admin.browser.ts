/**
 * The admin panel in a real headless Chromium (playwright-core, system /usr/bin/chromium): signing
 * in through the form, banning a user (their open WebSocket closes, their token answers 401),
 * resolving a report, a broadcast's live progress, a phone-sized screen and the keyboard. Every
 * page must load with no console error and no CSP violation (its one script comes from /admin).
 * Screenshots are kept in test-artifacts/ (admin-*.png).
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import test from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchChromium } from './with-chromium.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { TestSocket } from '../harness/socket.js'
import { openWatched } from './watched-page.js'

const ARTIFACTS = 'test-artifacts'
const V2 = '/api.v2/api'

const server = await startTestServer()
const browser: Browser = await launchChromium()
fs.mkdirSync(ARTIFACTS, { recursive: true })

interface Watched {
  context: BrowserContext
  page: Page
  /** console errors (CSP violations among them) and uncaught page errors */
  problems: string[]
}

async function openPage(viewport = { width: 1200, height: 900 }): Promise<Watched> {
  const { context, page, problems } = await openWatched(browser, { baseURL: server.url, viewport })
  // the panel's confirmations (data-confirm, admin.js): a person clicks OK
  page.on('dialog', (dialog) => void dialog.accept())
  return { context, page, problems }
}

/** Signs in through the panel's form, as a person would (labels, the button). */
async function signIn(page: Page, admin: TestUser) {
  const res = await page.goto('/admin')
  assert.equal(new URL(page.url()).pathname, '/admin/login', 'anonymous: sent to the login page')
  assert.equal(res?.status(), 200)
  await page.getByLabel('Username or email').fill(admin.username)
  await page.getByLabel('Password').fill(admin.password)
  await Promise.all([page.waitForURL(`${server.url}/admin`), page.getByRole('button', { name: 'Sign in' }).click()])
  assert.equal(await page.locator('h1').textContent(), 'Overview')
}

const shot = (page: Page, name: string, fullPage = true) => page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage })

test('an admin signs in and bans a user from the panel: their open WebSocket closes and their token answers 401', async () => {
  const admin = await server.createAdmin()
  const victim = await server.registerUser({ display_name: 'Spammy <b>McSpam</b>' })
  const socket = await TestSocket.connect(server.url, victim.token)
  const { context, page, problems } = await openPage()
  try {
    await signIn(page, admin)
    const cookie = (await context.cookies()).find((c) => c.name === 'tern_admin')
    assert.ok(cookie, 'the browser stored tern_admin')
    assert.equal(cookie.httpOnly, true)
    assert.equal(cookie.sameSite, 'Strict')
    assert.equal(cookie.path, '/admin')
    assert.equal(await page.evaluate(() => document.cookie), '', 'no panel cookie is readable by scripts')

    await page.getByRole('navigation', { name: 'Admin sections' }).getByRole('link', { name: 'Users' }).click()
    await page.getByLabel('Search').fill(victim.username)
    await Promise.all([page.waitForURL(/\/admin\/users\?/), page.getByRole('button', { name: 'Filter' }).click()])
    assert.equal(await page.getByRole('status').textContent(), '1 user found.')
    assert.ok(await page.getByRole('cell', { name: 'Spammy <b>McSpam</b>' }).isVisible(), 'the display name shown as text')
    await page.getByRole('link', { name: victim.username }).click()
    await page.waitForURL(`${server.url}/admin/users/${victim.id}`)

    assert.ok(await tokenWorks(victim.token))
    await page.getByLabel('Reason for the ban').fill('spam links in every group')
    await Promise.all([page.waitForURL(/notice=banned/), page.getByRole('button', { name: `Ban ${victim.username}` }).click()])
    assert.match((await page.getByRole('status').textContent()) ?? '', /The user is banned/)
    assert.equal(await page.locator('dd .badge.banned').textContent(), 'banned')
    assert.ok(await page.getByRole('button', { name: `Unban ${victim.username}` }).isVisible())
    await shot(page, 'admin-user-banned')

    const closed = await socket.closing()
    assert.equal(closed.code, 4003, `the socket closed as suspended: ${JSON.stringify(closed)}`)
    assert.equal((await server.api.as(victim.token).get(`${V2}/auth/me`)).status, 401)
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})

const tokenWorks = async (token: string) => (await server.api.as(token).get(`${V2}/auth/me`)).status === 200

test('an admin resolves a report from the queue with a note', async () => {
  const admin = await server.createAdmin()
  const [reporter, offender] = [await server.registerUser(), await server.registerUser()]
  const sent = await offender.api.post(`${V2}/messages/send`, {
    receiver_id: reporter.id,
    content: 'click <a href=x>here</a> for free stuff',
  })
  const report = await reporter.api.post(`${V2}/report`, { reported_message_id: sent.body.data.message_id, reason: 'scam link' })
  assert.equal(report.status, 200, report.text)
  const id = report.body.data.report_id
  const { context, page, problems } = await openPage()
  try {
    await signIn(page, admin)
    await page.getByRole('navigation', { name: 'Admin sections' }).getByRole('link', { name: 'Reports' }).click()
    const card = page.getByRole('article', { name: `Report #${id} · pending` })
    await card.waitFor()
    assert.equal(await card.locator('blockquote').textContent(), 'click <a href=x>here</a> for free stuff', 'the message shown as text')
    await shot(page, 'admin-reports-queue')
    await card.getByLabel('Note (optional)').first().fill('scam: link removed by the user')
    await Promise.all([page.waitForURL(/notice=resolved/), card.getByRole('button', { name: 'Resolve' }).click()])
    assert.equal(await page.getByRole('status').first().textContent(), 'The report is resolved.')
    assert.equal(await page.getByRole('article', { name: `Report #${id} · pending` }).count(), 0, 'gone from the pending queue')

    await page.getByRole('navigation', { name: 'Report status' }).getByRole('link', { name: 'Resolved' }).click()
    const closed = page.getByRole('article', { name: `Report #${id} · resolved` })
    await closed.waitFor()
    assert.match((await closed.textContent()) ?? '', /scam: link removed by the user/)
    await shot(page, 'admin-report-resolved')

    const api = await admin.api.get('/api/admin/reports', { query: { status: 'resolved' } })
    const row = api.body.items.find((r: { report_id: number }) => r.report_id === id)
    assert.equal(row?.note, 'scam: link removed by the user')
    assert.equal(row?.resolved_by, admin.id)
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})

test('an admin sends a broadcast and watches its progress reach the total, without reloading', async () => {
  const admin = await server.createAdmin()
  for (let i = 0; i < 5; i++) await server.registerUser()
  const { context, page, problems } = await openPage()
  const polls: string[] = []
  page.on('request', (request) => {
    if (/\/admin\/broadcasts\/\d+\/progress$/.test(request.url())) polls.push(request.url())
  })
  try {
    await signIn(page, admin)
    await page.getByRole('navigation', { name: 'Admin sections' }).getByRole('link', { name: 'Broadcast' }).click()
    await page.getByLabel('Message').fill('Scheduled maintenance tonight at 02:00 UTC.')
    await Promise.all([page.waitForURL(/\/admin\/broadcasts\/\d+$/), page.getByRole('button', { name: 'Send to everyone' }).click()])
    const section = page.locator('[data-progress-url]')
    const initial = await section.getAttribute('data-status')
    await page.evaluate(() => ((window as unknown as { loadedOnce: boolean }).loadedOnce = true))

    await page.waitForFunction(() => document.querySelector('[data-field="status"]')?.textContent === 'done', undefined, {
      timeout: 20_000,
    })
    const sent = Number(await page.locator('[data-field="sent"]').textContent())
    const total = Number(await page.locator('[data-field="total"]').textContent())
    assert.ok(total >= 6, `every active user: ${total}`)
    assert.equal(sent, total)
    const bar = await page
      .locator('progress')
      .evaluate((el) => ({ value: (el as HTMLProgressElement).value, max: (el as HTMLProgressElement).max }))
    assert.deepEqual(bar, { value: total, max: total })
    assert.match(
      (await page.locator('[data-field="finished"]').textContent()) ?? '',
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/,
      'the finish time filled in too',
    )
    assert.equal(await page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce), true, 'the same page, not a reload')
    if (initial !== 'done') assert.ok(polls.length >= 1, 'the script polled the progress')
    await shot(page, 'admin-broadcast-done')
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})

test('on a 390 px wide screen the pages fit (tables scroll in their box), and the keyboard reaches everything with a visible focus', async () => {
  const admin = await server.createAdmin()
  await server.registerUser({ email: 'a.rather.long.address.for.a.narrow.screen@example.com' })
  const { context, page, problems } = await openPage({ width: 390, height: 844 })
  try {
    await signIn(page, admin)
    for (const path of [
      '/admin',
      '/admin/users',
      '/admin/reports',
      '/admin/stats',
      '/admin/status',
      '/admin/promos',
      '/admin/modlog',
      '/admin/broadcast',
    ]) {
      await page.goto(path)
      const width = await page.evaluate(() => document.documentElement.scrollWidth)
      assert.ok(width <= 390, `${path} is ${width} px wide`)
    }
    await page.goto('/admin/users')
    await shot(page, 'admin-users-390')
    await page.goto('/admin/stats')
    await shot(page, 'admin-stats-390')

    // keyboard: the first Tab shows the skip link, with a visible outline; Enter moves to the content
    await page.goto('/admin/users')
    await page.keyboard.press('Tab')
    const skip = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement
      const style = getComputedStyle(el)
      return { text: el.textContent, outline: style.outlineStyle, width: style.outlineWidth, left: el.getBoundingClientRect().left }
    })
    assert.equal(skip.text, 'Skip to content')
    assert.equal(skip.outline, 'solid')
    assert.ok(skip.left >= 0, 'on screen when focused')
    await page.keyboard.press('Enter')
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'main')
    // on to the search box by keyboard alone, then search with Enter
    let reached = false
    for (let i = 0; i < 10 && !reached; i++) {
      await page.keyboard.press('Tab')
      reached = await page.evaluate(() => document.activeElement?.id === 'q')
    }
    assert.ok(reached, 'the search box is reachable with Tab')
    assert.equal(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle), 'solid', 'focus is visible')
    await page.keyboard.type(admin.username)
    await Promise.all([page.waitForURL(/q=/), page.keyboard.press('Enter')])
    assert.equal(await page.getByRole('status').textContent(), '1 user found.')
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})

test('the stats page draws both charts as images with a name a screen reader reads', async () => {
  const admin = await server.createAdmin()
  const [a, b] = [await server.registerUser(), await server.registerUser()]
  await a.api.post(`${V2}/messages/send`, { receiver_id: b.id, content: 'hello' })
  const { context, page, problems } = await openPage()
  try {
    await signIn(page, admin)
    await page.goto('/admin/stats')
    const messages = page.getByRole('img', { name: /Messages per day, last 30 days/ })
    const active = page.getByRole('img', { name: /Active users per day, last 30 days/ })
    assert.ok(await messages.isVisible())
    assert.ok(await active.isVisible())
    const box = await messages.boundingBox()
    assert.ok(box && box.width > 300 && box.height > 100, `drawn at a readable size: ${JSON.stringify(box)}`)
    assert.ok((await messages.locator('circle').count()) === 30, 'a point per day')
    await shot(page, 'admin-stats')
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})
