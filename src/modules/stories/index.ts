/** The stories module's public surface: what other modules may use. */
export { cleanupExpiredStories } from './cleanup.js'
export { feed, hasActive, remove } from './service.js'
