/** The web app in a real Chromium (app.browser.ts); skipped loudly without it (with-chromium.ts). */
import { withChromium } from './with-chromium.js'

await withChromium('the web app', () => import('./app.browser.js'))
