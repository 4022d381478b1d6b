/** The auth module's public surface: what other modules may use. */
export { verifyEmail, wasConfirmedBy } from './email-verification.js'
export { forgotPassword, readResetLinkToken, resetPassword } from './password.js'
export { codePage } from './qr-login.js'
export { AuthResult, RegisterBody } from './schemas.js'
export { keyedHash } from './secret-box.js'
export { finishTotp, login, logout, me, register } from './service.js'
export type { ClientInfo, TotpRequired } from './service.js'
export { isTwoFactorEnabled, resetTwoFactor } from './two-factor.js'
