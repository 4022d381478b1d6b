/** The channels module's public surface: what other modules may use. */
export { subscribe } from './service.js'
