/** The presence module's public surface: what other modules may use. */
export { presenceOf } from './service.js'
