/** The settings module's public surface: what other modules may use. */
export { get, notificationPrefs } from './service.js'
