/**
 * The web app's browser tests (app.browser.ts) need Debian's chromium at /usr/bin/chromium.
 * Without it they are skipped with a loud line, so `npm test` passes on a fresh machine;
 * TEST_REQUIRE_BROWSER=1 (which .ci/run sets, after installing it) makes a missing browser a
 * failure instead.
 */
import fs from 'node:fs'
import { test } from 'node:test'

const CHROMIUM = '/usr/bin/chromium'
const HOW = `browser tests need Debian's chromium at ${CHROMIUM}: apt-get install chromium`

if (fs.existsSync(CHROMIUM)) await import('./app.browser.js')
else if (process.env.TEST_REQUIRE_BROWSER === '1') throw new Error(`TEST_REQUIRE_BROWSER=1 but ${HOW}`)
else {
  console.log(`# SKIPPED web app browser tests: ${HOW} (TEST_REQUIRE_BROWSER=1 makes this a failure)`)
  test('the web app in a real browser', { skip: HOW }, () => {})
}
