/** The admin module's public surface: what other modules may use. */
export { afterSuspension, ban, listUsers, setRole, suspendIn, unban, userDetail } from './service.js'
