import { Type, type Static } from 'typebox'
import { Me, Username } from '../../http/schemas.js'

export const RegisterBody = Type.Object(
  {
    username: Username,
    password: Type.String({
      minLength: 8,
      maxLength: 256,
      errorMessage: 'Password must be 8 to 256 characters',
    }),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254, errorMessage: 'email must be a valid email address' })),
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
)
export type RegisterBody = Static<typeof RegisterBody>

export const LoginBody = Type.Object(
  {
    login: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
    device: Type.Optional(Type.String({ maxLength: 128 })),
  },
  { additionalProperties: false },
)
export type LoginBody = Static<typeof LoginBody>

export const AuthResult = Type.Object({ user: Me, session_token: Type.String() })
export type AuthResult = Static<typeof AuthResult>

export const MessageResult = Type.Object({ message: Type.String() })

/** A login whose password (or emailed code) passed and that waits for the second factor. */
export const TotpRequired = Type.Object({
  next: Type.Literal('totp', { description: 'the step that finishes this login' }),
  ticket: Type.String({ description: 'single use, valid 5 minutes; finish with auth/login/totp or login_v3 step totp' }),
})

export const LoginResult = Type.Union([AuthResult, TotpRequired])

/** A 6-digit TOTP code, or a recovery code (xxxxx-xxxxx) where the step accepts one. */
const Code = Type.String({ minLength: 1, maxLength: 32, errorMessage: 'code must be a 6-digit code (or a recovery code)' })

export const CodeBody = Type.Object({ code: Code }, { additionalProperties: false })
export type CodeBody = Static<typeof CodeBody>

export const TotpLoginBody = Type.Object(
  { ticket: Type.String({ minLength: 1, maxLength: 128 }), code: Code },
  { additionalProperties: false },
)
export type TotpLoginBody = Static<typeof TotpLoginBody>

export const TwoFactorSetupResult = Type.Object({
  secret: Type.String({ description: 'base32; shown only now' }),
  otpauth_url: Type.String(),
  qr_svg: Type.String({ description: 'the otpauth URL as a QR code (SVG)' }),
})

export const TwoFactorState = Type.Object({
  enabled: Type.Boolean(),
  recovery_codes: Type.Optional(Type.Array(Type.String(), { description: 'on enable only: 10 single-use codes, shown only now' })),
})

/** login_v3: one endpoint, one step per call; each step names the fields it needs. */
export const LoginV3Body = Type.Object(
  {
    step: Type.Union(
      [Type.Literal('email'), Type.Literal('send_otp'), Type.Literal('verify_otp'), Type.Literal('password'), Type.Literal('totp')],
      { errorMessage: 'step must be one of email, send_otp, verify_otp, password, totp' },
    ),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254, errorMessage: 'email must be a valid email address' })),
    code: Type.Optional(Code),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    ticket: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    device: Type.Optional(Type.String({ maxLength: 128 })),
  },
  { additionalProperties: false },
)
export type LoginV3Body = Static<typeof LoginV3Body>

export const EmailLookupResult = Type.Object({
  exists: Type.Boolean(),
  methods: Type.Array(Type.Union([Type.Literal('password'), Type.Literal('otp')]), { description: 'the first steps this account can sign in with' }),
})
export type EmailLookupResult = Static<typeof EmailLookupResult>

export const CodeSentResult = Type.Object({
  sent: Type.Literal(true),
  expires_in: Type.Integer({ description: 'seconds the code works' }),
  resend_in: Type.Integer({ description: 'seconds before another code may be asked for' }),
})
export type CodeSentResult = Static<typeof CodeSentResult>

export const LoginV3Result = Type.Union([EmailLookupResult, CodeSentResult, AuthResult, TotpRequired])

export const VerifyEmailBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false })
export const EmailVerified = Type.Object({ email_verified: Type.Literal(true), email: Type.String() })
export const VerificationSent = Type.Object({ sent: Type.Literal(true), email: Type.String() })

export const ChangeEmailBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254, errorMessage: 'email must be a valid email address' }),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'required when the account has a password' })),
  },
  { additionalProperties: false },
)
export const EmailChanged = Type.Object({
  email: Type.String(),
  email_verified: Type.Literal(false),
  verification_sent: Type.Boolean({ description: 'false when the mail could not be sent now: ask again with verify-email/resend' }),
})

/** QR login (auth/qr-login.ts): the fields of each step; `token` is the code's token from generate. */
const QrToken = Type.String({ minLength: 1, maxLength: 128, description: 'the token generate answered' })
const QrStatusName = Type.Union(
  [Type.Literal('pending'), Type.Literal('scanned'), Type.Literal('authorized'), Type.Literal('used'), Type.Literal('expired')],
  { errorMessage: 'since must be one of pending, scanned, authorized, used, expired' },
)
const QrWait = Type.Integer({ minimum: 0, maximum: 25, description: 'seconds to wait for a change of status (long polling), at most 25' })
const QrDevice = Type.String({ maxLength: 128, description: 'how the new device names itself (shown to the device that scans)' })

export const QrGenerateBody = Type.Object({ device: Type.Optional(QrDevice) }, { additionalProperties: false })
export const QrTokenBody = Type.Object({ token: QrToken }, { additionalProperties: false })
export const QrStatusBody = Type.Object(
  { token: QrToken, wait: Type.Optional(QrWait), since: Type.Optional(QrStatusName) },
  { additionalProperties: false },
)
/** `POST auth/qr {step, …}`: the alias of the five paths. */
export const QrStepBody = Type.Object(
  {
    step: Type.Union(
      [Type.Literal('generate'), Type.Literal('request'), Type.Literal('status'), Type.Literal('authorize'), Type.Literal('login')],
      { errorMessage: 'step must be one of generate, request, status, authorize, login' },
    ),
    token: Type.Optional(QrToken),
    device: Type.Optional(QrDevice),
    wait: Type.Optional(QrWait),
    since: Type.Optional(QrStatusName),
  },
  { additionalProperties: false },
)
export type QrStepBody = Static<typeof QrStepBody>

export const QrCodeResult = Type.Object({
  token: Type.String({ description: 'single use, valid 2 minutes' }),
  qr_url: Type.String({ description: '{base_url}/qr/<token>: what the code holds, and a page that shows it' }),
  qr_svg: Type.String({ description: 'the code as an SVG' }),
  expires_at: Type.String(),
})
export const QrStatusResult = Type.Object({ status: QrStatusName, expires_at: Type.String() })
export const QrRequestResult = Type.Object({
  status: QrStatusName,
  device: Type.Union([Type.String(), Type.Null()], { description: 'how the asking device named itself' }),
  ip_address: Type.Union([Type.String(), Type.Null()]),
  user_agent: Type.Union([Type.String(), Type.Null()]),
  requested_at: Type.String(),
  expires_at: Type.String(),
})
export const QrStepResult = Type.Union([QrCodeResult, QrRequestResult, QrStatusResult, AuthResult])

/** `POST auth/oauth/<provider>`: an authorization code, or an id_token. */
export const OAuthBody = Type.Object(
  {
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    redirect_uri: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'the redirect_uri the code was issued for' })),
    code_verifier: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._~-]{43,128}$', errorMessage: 'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, ., _, ~ and -' })),
    id_token: Type.Optional(Type.String({ minLength: 1, maxLength: 16384 })),
    nonce: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    device: Type.Optional(Type.String({ maxLength: 128 })),
  },
  { additionalProperties: false },
)
export type OAuthBody = Static<typeof OAuthBody>

/** Account lifecycle (password.ts, account.ts, export.ts). */
const NewPassword = Type.String({ minLength: 8, maxLength: 256, errorMessage: 'new_password must be 8 to 256 characters' })
const StepCode = Type.String({
  minLength: 1,
  maxLength: 32,
  description: 'accounts without a password: a TOTP (or recovery) code when two-factor is on, else the code mailed for this step',
  errorMessage: 'code must be a 6-digit code (or a recovery code)',
})

export const ChangePasswordBody = Type.Object(
  {
    current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'required when the account has a password' })),
    code: Type.Optional(StepCode),
    new_password: NewPassword,
  },
  { additionalProperties: false },
)
export type ChangePasswordBody = Static<typeof ChangePasswordBody>
export const PasswordChanged = Type.Object({
  changed: Type.Literal(true),
  sessions_ended: Type.Integer({ description: 'how many other sessions were signed out' }),
})

export const StepCodeSent = Type.Object({
  sent: Type.Literal(true),
  email: Type.String({ description: 'where the code went' }),
  expires_in: Type.Integer({ description: 'seconds the code works' }),
  resend_in: Type.Integer({ description: 'seconds before another code may be asked for' }),
})

const Email = Type.String({ format: 'email', maxLength: 254, errorMessage: 'email must be a valid email address' })
export const ForgotPasswordBody = Type.Object({ email: Email }, { additionalProperties: false })
export const ResetCodeSent = Type.Object({
  sent: Type.Literal(true, { description: 'the same answer whether or not an account has the address' }),
  expires_in: Type.Integer({ description: 'seconds the code works' }),
})
export const ResetPasswordBody = Type.Object(
  {
    email: Email,
    code: Type.String({ minLength: 1, maxLength: 32, errorMessage: 'code must be the 6-digit code of the mail' }),
    new_password: NewPassword,
  },
  { additionalProperties: false },
)
export const PasswordReset = Type.Object({ reset: Type.Literal(true) })

export const DeleteAccountBody = Type.Object(
  {
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'required when the account has a password' })),
    code: Type.Optional(StepCode),
  },
  { additionalProperties: false },
)
export const AccountDeleted = Type.Object({ deleted: Type.Literal(true) })
