/**
 * A browser context with one page whose console errors (CSP violations among them) and uncaught
 * page errors are collected in `problems`, so a test can assert the page ran clean. The browser's
 * own favicon probe (Tern serves no favicon) is not a problem.
 */
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core'

export interface WatchedPage {
  context: BrowserContext
  page: Page
  problems: string[]
}

export async function openWatched(browser: Browser, options: BrowserContextOptions): Promise<WatchedPage> {
  const context = await browser.newContext(options)
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    if (/status of 404/.test(message.text()) && /\/favicon\.ico$/.test(message.location().url)) return
    problems.push(`console: ${message.text()} (${message.location().url})`)
  })
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`))
  return { context, page, problems }
}
