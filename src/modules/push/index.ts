/** The push module's public surface: what other modules may use. */
export { preparePush, queueForCall, queueForNewMessage } from './reactions.js'
export { forgetSession, forgetUser } from './subscriptions.js'
