/**
 * People in the web app, for the browser suites (app.browser.ts, features.browser.ts): one
 * server and one headless Chromium per suite file; each person is a browser context (own cookies)
 * with one page, registered or signed in through the real pages. Console errors and page errors
 * are collected so every test can assert the app ran clean.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import { launchChromium } from './with-chromium.js'
import { startTestServer, uniqueName, type TestUser } from '../harness/server.js'
import { startTestVideo, TEST_VIDEO_SECRET } from '../harness/signal.js'
import { openWatched } from './watched-page.js'

export const ARTIFACTS = 'test-artifacts'
export const V2 = '/api.v2/api'
export const PASSWORD = 'correct horse battery'
export const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** the video service in-process, so the call page (opened from the app) can signal */
const video = await startTestVideo()
export const server = await startTestServer({ env: { VIDEO_URL: video.url, VIDEO_SECRET: TEST_VIDEO_SECRET } })
// fake camera and microphone, allowed without asking: the call page's media
export const browser: Browser = await launchChromium(['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'])
fs.mkdirSync(ARTIFACTS, { recursive: true })

export interface Person {
  username: string
  id: number
  context: BrowserContext
  page: Page
  /** console errors and uncaught page errors */
  problems: string[]
}

export async function newContext(viewport = { width: 1100, height: 800 }) {
  return openWatched(browser, { baseURL: server.url, viewport })
}

/** Registers through /register, as a person would; lands in the app. */
export async function registerInBrowser(displayName: string, viewport?: { width: number; height: number }): Promise<Person> {
  const { context, page, problems } = await newContext(viewport)
  const username = uniqueName('w')
  await page.goto('/register')
  await page.getByLabel(/^Username/).fill(username)
  await page.getByLabel(/^Display name/).fill(displayName)
  await page.getByLabel(/^Password/).fill(PASSWORD)
  await Promise.all([page.waitForURL(/\/app$/), page.getByRole('button', { name: 'Create the account' }).click()])
  await page.getByRole('navigation', { name: 'Chats' }).waitFor()
  const me = await page.evaluate(async () => (await (await fetch('/api/web/session')).json()).data.user.id as number)
  return { username, id: me, context, page, problems }
}

/** Signs in through /login with an account made over the API. */
export async function signInInBrowser(user: TestUser, viewport?: { width: number; height: number }): Promise<Person> {
  const { context, page, problems } = await newContext(viewport)
  await page.goto('/app')
  await page.waitForURL(/\/login/)
  // signed out, the app's session request is the 401 that sent it to /login: expected here
  assert.deepEqual(
    problems.splice(0).map((p) => /status of 401.*\/api\/web\/session/.test(p)),
    [true],
  )
  await page.getByLabel(/^Username or email/).fill(user.username)
  await page.getByLabel(/^Password/).fill(user.password)
  await Promise.all([page.waitForURL(/\/app$/), page.getByRole('button', { name: 'Sign in' }).click()])
  await page.getByRole('navigation', { name: 'Chats' }).waitFor()
  return { username: user.username, id: user.id, context, page, problems }
}

export const chatLink = (p: Person, name: RegExp | string) => p.page.getByRole('navigation', { name: 'Chats' }).getByRole('link', { name })
export const messages = (p: Person) => p.page.locator('ol.messages > li.msg')
export const messageWith = (p: Person, text: string) => messages(p).filter({ has: p.page.locator('p.text', { hasText: text }) })
export const texts = (p: Person) => p.page.locator('ol.messages > li.msg p.text').allTextContents()

export async function send(p: Person, text: string) {
  const box = p.page.getByLabel('Message', { exact: true })
  await box.fill(text)
  await p.page.getByRole('button', { name: 'Send' }).click()
  await messageWith(p, text).waitFor()
  assert.equal(await box.inputValue(), '', 'the box is empty after sending')
}

export async function action(_p: Person, message: Locator, name: string) {
  await message.getByRole('button', { name: 'Message actions' }).click()
  await message.getByRole('button', { name, exact: true }).click()
}

/** A: New → find B → Message: the personal chat opens. */
export async function openChatWith(a: Person, b: Person) {
  await a.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'New' }).click()
  await a.page.getByLabel('Username or name').fill(b.username)
  await a.page.getByRole('button', { name: 'Find' }).click()
  await a.page.getByRole('button', { name: `Message ${b.username}` }).click()
  await a.page.waitForURL(/\/app\/chat\/\d+$/)
  return Number(/chat\/(\d+)$/.exec(a.page.url())![1])
}

export const shot = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) })

export const noProblems = (...people: Person[]) =>
  assert.deepEqual(
    people.flatMap((p) => p.problems),
    [],
  )
