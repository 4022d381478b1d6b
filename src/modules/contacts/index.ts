/** The contacts module's public surface: what other modules may use. */
export { contactIds, counts, isContactOf, ownersOf } from './service.js'
