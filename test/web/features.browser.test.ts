/** The web app's polls, bot keyboards, roles and stories in a real Chromium (features.browser.ts); skipped loudly without it (with-chromium.ts). */
import { withChromium } from './with-chromium.js'

await withChromium("the web app's polls, bot keyboards, roles and stories", () => import('./features.browser.js'))
