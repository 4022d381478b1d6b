/** The broadcasts module's public surface: what other modules may use. */
export { get, list, start } from './service.js'
export type { BroadcastView } from './service.js'
