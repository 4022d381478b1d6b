/** The referrals module's public surface: what other modules may use. */
export { invitedBy } from './service.js'
