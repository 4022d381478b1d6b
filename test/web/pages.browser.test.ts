/** The pages in a real Chromium (pages.browser.ts); skipped loudly without it (with-chromium.ts). */
import { withChromium } from './with-chromium.js'

await withChromium('the pages', () => import('./pages.browser.js'))
