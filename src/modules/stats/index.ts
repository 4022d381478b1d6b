/** The stats module's public surface: what other modules may use. */
export { adminStats, publicStats, serverStatus } from './service.js'
