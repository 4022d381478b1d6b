/**
 * The sign-in pages in a real Chromium (login.browser.ts). Needs Debian's chromium at
 * /usr/bin/chromium; without it the tests are skipped with a loud line, unless
 * TEST_REQUIRE_BROWSER=1 (CI) makes that a failure.
 */
import fs from 'node:fs'
import { test } from 'node:test'

const CHROMIUM = '/usr/bin/chromium'
const HOW = `browser tests need Debian's chromium at ${CHROMIUM}: apt-get install chromium`

if (fs.existsSync(CHROMIUM)) await import('./login.browser.js')
else if (process.env.TEST_REQUIRE_BROWSER === '1') throw new Error(`TEST_REQUIRE_BROWSER=1 but ${HOW}`)
else {
  console.log(`# SKIPPED browser tests: ${HOW} (TEST_REQUIRE_BROWSER=1 makes this a failure)`)
  test('sign-in pages in a real browser', { skip: HOW }, () => {})
}
