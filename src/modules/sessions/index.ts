/** The sessions module's public surface: what other modules may use. */
export {
  authenticate,
  authenticateHash,
  closeSockets,
  createSession,
  listSessions,
  revokeAllSessions,
  revokeOtherSessions,
  revokeSession,
} from './service.js'
export type { Authenticated } from './service.js'
