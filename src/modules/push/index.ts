/** The push module's public surface: what other modules may use. */
export { forgetSession, forgetUser } from './subscriptions.js'
