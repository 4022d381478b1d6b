/** The profile module's public surface: what other modules may use. */
export { countersFor } from './counters.js'
