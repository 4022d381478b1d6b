/** The account settings of the web app in a real Chromium (account-settings.browser.ts); skipped loudly without it (with-chromium.ts). */
import { withChromium } from './with-chromium.js'

await withChromium('the account settings', () => import('./account-settings.browser.js'))
