/** The sign-in pages in a real Chromium (login.browser.ts); skipped loudly without it (with-chromium.ts). */
import { withChromium } from './with-chromium.js'

await withChromium('the sign-in pages', () => import('./login.browser.js'))
