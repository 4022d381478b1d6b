/** The search module's public surface: what other modules may use. */
export { searchFileFor } from './message-index.js'
