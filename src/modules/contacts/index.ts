/** The contacts module's public surface: what other modules may use. */
export { isContactOf } from './service.js'
export { contactIds, counts, ownersOf } from './repo.js'
