/** The contacts module's public surface: what other modules may use. */
export { contactIds, counts, ownersOf } from './repo.js'
export { isContactOf } from './service.js'
