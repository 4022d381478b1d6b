/** The admin panel in a real Chromium (admin.browser.ts); skipped loudly without it (with-chromium.ts). */
import { withChromium } from './with-chromium.js'

await withChromium('the admin panel', () => import('./admin.browser.js'))
