/**
 * The browser suites need Debian's chromium at /usr/bin/chromium. Each `*.browser.test.ts` loads
 * its suite through `withChromium`: with the browser there, the suite runs; without it, it is
 * skipped with a loud line (so `npm test` passes on a fresh machine), unless
 * TEST_REQUIRE_BROWSER=1 (which .ci/run sets, after installing it) makes that a failure.
 */
import fs from 'node:fs'
import { after, test } from 'node:test'
import { chromium, type Browser } from 'playwright-core'

const CHROMIUM = '/usr/bin/chromium'
const HOW = `browser tests need Debian's chromium at ${CHROMIUM}: apt-get install chromium`

export async function withChromium(what: string, load: () => Promise<unknown>) {
  if (fs.existsSync(CHROMIUM)) return void (await load())
  if (process.env.TEST_REQUIRE_BROWSER === '1') throw new Error(`TEST_REQUIRE_BROWSER=1 but ${HOW}`)
  console.log(`# SKIPPED ${what} browser tests: ${HOW} (TEST_REQUIRE_BROWSER=1 makes this a failure)`)
  test(`${what} in a real browser`, { skip: HOW }, () => {})
}

/** Headless Chromium for a suite (with `extraArgs` beside the usual ones), closed when the file's tests end. */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...extraArgs],
  })
  after(() => browser.close())
  return browser
}
