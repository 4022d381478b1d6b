/**
 * The browser suites need Debian's chromium at /usr/bin/chromium. Each `*.browser.test.ts` loads
 * its suite through `withChromium`: with the browser there, the suite runs; without it, it is
 * skipped with a loud line (so `npm test` passes on a fresh machine), unless
 * TEST_REQUIRE_BROWSER=1 (which .ci/run sets, after installing it) makes that a failure.
 */
import fs from 'node:fs'
import { test } from 'node:test'

const CHROMIUM = '/usr/bin/chromium'
const HOW = `browser tests need Debian's chromium at ${CHROMIUM}: apt-get install chromium`

export async function withChromium(what: string, load: () => Promise<unknown>) {
  if (fs.existsSync(CHROMIUM)) return void (await load())
  if (process.env.TEST_REQUIRE_BROWSER === '1') throw new Error(`TEST_REQUIRE_BROWSER=1 but ${HOW}`)
  console.log(`# SKIPPED ${what} browser tests: ${HOW} (TEST_REQUIRE_BROWSER=1 makes this a failure)`)
  test(`${what} in a real browser`, { skip: HOW }, () => {})
}
