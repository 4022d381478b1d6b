/** The mail module's public surface: what other modules may use. */
export { sendMail } from './service.js'
