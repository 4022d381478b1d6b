/**
 * The account part of the app's settings screen (web/src/components/Account.tsx) in headless
 * Chromium: a person changes the password through the UI (another session of theirs ends, this
 * one stays, the new password signs in), downloads their data, and deletes the account after
 * confirming; "Forgot your password?" on the sign-in page leads to the reset form. Pages must run
 * with no console error or CSP violation. Loaded by account-settings.browser.test.ts.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import test from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from './with-chromium.js'
import { startTestServer, type TestUser } from '../harness/server.js'
import { openWatched } from './watched-page.js'

const V2 = '/api.v2/api'
const server = await startTestServer()
const browser: Browser = await launchChromium()

/** Signs in through /login and opens the settings screen. */
async function signedInSettings(user: TestUser) {
  const watched = await openWatched(browser, { baseURL: server.url, viewport: { width: 1100, height: 900 }, acceptDownloads: true })
  const { page } = watched
  await page.goto('/login')
  await page.getByLabel('Username or email').fill(user.username)
  await page.getByLabel('Password', { exact: true }).fill(user.password)
  await Promise.all([page.waitForURL(/\/app$/), page.getByRole('button', { name: 'Sign in' }).click()])
  await page.goto('/app/profile')
  await page.getByRole('heading', { name: 'Change password' }).waitFor()
  return watched
}

const statusOf = (page: Page, form: string) => page.locator('form', { has: page.getByRole('heading', { name: form }) }).getByRole('status')

test('changing the password in the settings: a wrong current one is refused, then the change signs the other session out', async () => {
  const user = await server.registerUser({ display_name: 'Pat Browser' })
  const { context, page, problems } = await signedInSettings(user)
  try {
    await page.getByLabel('Current password').fill('not my password')
    await page.getByLabel('New password (at least 8 characters)').fill('browser new password')
    await page.getByLabel('New password again').fill('browser new password')
    const refused = page.waitForResponse((res) => res.url().endsWith('/auth/password'))
    await page.getByRole('button', { name: 'Change password' }).click()
    assert.equal((await refused).status(), 403)
    await page.getByText('The password is wrong').waitFor()
    assert.match(problems.pop() ?? '', /status of 403/, 'the refusal the test asked for')
    assert.equal((await user.api.get(`${V2}/auth/me`)).status, 200, 'nothing changed: the other session works')

    await page.getByLabel('Current password').fill(user.password)
    await page.getByRole('button', { name: 'Change password' }).click()
    await statusOf(page, 'Change password')
      .filter({ hasText: /Password changed\. 1 other session was signed out/ })
      .waitFor()
    assert.equal((await user.api.get(`${V2}/auth/me`)).status, 401, 'the other session ended')
    // this browser's session goes on
    const session = await page.request.get('/api/web/session')
    assert.equal(session.status(), 200)
    assert.equal((await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })).status, 401)
    assert.equal((await server.api.post(`${V2}/auth/login`, { login: user.username, password: 'browser new password' })).status, 200)
    await page.screenshot({ path: 'test-artifacts/account-settings.png' })
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})

test('downloading my data, then deleting the account after confirming', async () => {
  const user = await server.registerUser({ display_name: 'Dana Leaving' })
  const { context, page, problems } = await signedInSettings(user)
  try {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download my data' }).click()])
    assert.match(download.suggestedFilename(), new RegExp(`^tern-export-${user.id}-\\d{4}-\\d{2}-\\d{2}\\.json$`))
    const archive = JSON.parse(fs.readFileSync((await download.path())!, 'utf8'))
    assert.equal(archive.data.profile.username, user.username)

    await page.getByRole('button', { name: 'Delete my account…' }).click()
    const confirm = page.getByRole('button', { name: 'Delete my account', exact: true })
    assert.equal(await confirm.isDisabled(), true, 'not before the box is ticked')
    await page.getByLabel('Your password').fill(user.password)
    await page.getByLabel(/I understand/).check()
    await Promise.all([page.waitForURL((url) => !url.pathname.startsWith('/app')), confirm.click()])
    assert.equal((await server.api.post(`${V2}/auth/login`, { login: user.username, password: user.password })).status, 401)
    assert.equal((await page.request.get('/api/web/session')).status(), 401)
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})

test('"Forgot your password?" on the sign-in page leads to the form that mails a code', async () => {
  const { context, page, problems } = await openWatched(browser, { baseURL: server.url })
  try {
    await page.goto('/login')
    await page.getByRole('link', { name: 'Forgot your password?' }).click()
    await page.waitForURL(/\/forgot-password$/)
    await page.getByLabel('Email').fill('someone@example.test')
    await page.getByRole('button', { name: 'Send me a code' }).click()
    await page.getByText('If an account has this address, a code is on its way').waitFor()
    assert.equal(await page.getByLabel('The 6-digit code from the mail').count(), 1)
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})
