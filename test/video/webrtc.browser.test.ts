/**
 * The WebRTC browser tests (webrtc.browser.ts) need Debian's chromium at /usr/bin/chromium.
 * Without it they are skipped with a loud line; TEST_REQUIRE_BROWSER=1 (CI) makes a missing
 * browser a failure instead. The relay run also needs coturn (TEST_REQUIRE_COTURN=1 likewise).
 */
import fs from 'node:fs'
import { test } from 'node:test'

const CHROMIUM = '/usr/bin/chromium'
const HOW = `browser tests need Debian's chromium at ${CHROMIUM}: apt-get install chromium`

if (fs.existsSync(CHROMIUM)) await import('./webrtc.browser.js')
else if (process.env.TEST_REQUIRE_BROWSER === '1') throw new Error(`TEST_REQUIRE_BROWSER=1 but ${HOW}`)
else {
  console.log(`# SKIPPED WebRTC browser tests: ${HOW} (TEST_REQUIRE_BROWSER=1 makes this a failure)`)
  test('WebRTC calls and rooms in real browsers', { skip: HOW }, () => {})
}
