/** The calls module's public surface: what other modules may use. */
export { CallView } from './schemas.js'
export { get } from './service.js'
export { endVideoSessions, signalingUrl } from './video-client.js'
