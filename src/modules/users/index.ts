/** The users module's public surface: what other modules may use. */
export { PRELOADED_AVATARS, avatarUrl, findPreloaded, preloadedAvatarValue, preloadedUrl } from './avatars.js'
export { isPremium, presentAdminUser, presentFullPeer, presentMe, presentPeer, uploadUrl } from './present.js'
export type { AdminUserView, PeerCounters, PeerView } from './present.js'
export {
  activateTwoFactor,
  claimTwoFactorStep,
  clearOnlineFlags,
  clearTwoFactor,
  countActiveAdmins,
  countPremium,
  countWarning,
  dropLapsedEmails,
  findByIds,
  findByPhones,
  lockUser,
  presenceOf,
  releaseUsernames,
} from './repo.js'
export {
  createUser,
  dropUnconfirmedEmail,
  emailStanding,
  ensureAdmin,
  eraseAccount,
  findById,
  findByIdIn,
  findByLogin,
  findByUsername,
  getUser,
  hashPassword,
  insertBotAccount,
  insertExternalAccount,
  isEmailTaken,
  isUsernameFree,
  listUsers,
  markOffline,
  touchActivity,
  updateUser,
  verifyPassword,
} from './service.js'
export type { UserFilter } from './service.js'
export { systemAccount } from './system.js'
