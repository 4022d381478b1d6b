import { Type, type Static } from 'typebox'
import { Me, Nullable, Timestamp, Username } from '../../http/schemas.js'
import { Order } from '../premium/index.js'

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
  methods: Type.Array(Type.Union([Type.Literal('password'), Type.Literal('otp')]), {
    description: 'the first steps this account can sign in with',
  }),
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
const QrSecret = Type.String({
  minLength: 20,
  maxLength: 128,
  description: 'the secret generate answered: only the device that generated the code has it',
})
export const QrTokenBody = Type.Object({ token: QrToken }, { additionalProperties: false })
export const QrDeviceBody = Type.Object({ token: QrToken, secret: QrSecret }, { additionalProperties: false })
export const QrStatusBody = Type.Object(
  { token: QrToken, secret: QrSecret, wait: Type.Optional(QrWait), since: Type.Optional(QrStatusName) },
  { additionalProperties: false },
)
/** `POST auth/qr {step, …}`: the alias of the five paths. */
export const QrStepBody = Type.Object(
  {
    step: Type.Union(
      [
        Type.Literal('generate'),
        Type.Literal('request'),
        Type.Literal('status'),
        Type.Literal('authorize'),
        Type.Literal('login'),
        Type.Literal('decline'),
      ],
      { errorMessage: 'step must be one of generate, request, status, authorize, login, decline' },
    ),
    token: Type.Optional(QrToken),
    secret: Type.Optional(QrSecret),
    device: Type.Optional(QrDevice),
    wait: Type.Optional(QrWait),
    since: Type.Optional(QrStatusName),
  },
  { additionalProperties: false },
)
export type QrStepBody = Static<typeof QrStepBody>

export const QrCodeResult = Type.Object({
  token: Type.String({ description: 'single use, valid 2 minutes; what the picture carries' }),
  secret: Type.String({ description: 'keep it on this device only: status, login and decline need it' }),
  qr_url: Type.String({ description: '{base_url}/qr/<token>: what the code holds, and a page that shows it' }),
  qr_svg: Type.String({ description: 'the code as an SVG' }),
  expires_at: Type.String(),
})
const QrAccount = Type.Object({ user_id: Type.Integer(), username: Type.String(), display_name: Type.Union([Type.String(), Type.Null()]) })
export const QrStatusResult = Type.Object({
  status: QrStatusName,
  expires_at: Type.String(),
  account: Type.Optional(
    Type.Union([QrAccount, Type.Null()], {
      description: 'the account that scanned the code (scanned, authorized): signing in opens a session of this account',
    }),
  ),
})
export const QrRequestResult = Type.Object({
  status: QrStatusName,
  device: Type.Union([Type.String(), Type.Null()], { description: 'how the asking device named itself' }),
  ip_address: Type.Union([Type.String(), Type.Null()]),
  place: Type.Union([Type.String(), Type.Null()], {
    description:
      'where that address is, as near as the server can tell: a country, "this computer" or "a local network"; null when unknown',
  }),
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
    code_verifier: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9._~-]{43,128}$',
        errorMessage: 'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, ., _, ~ and -',
      }),
    ),
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

/** `GET auth/export`: the archive (export.ts). Others appear as `{user_id, username}` only. */
const Someone = Type.Object({ user_id: Type.Integer(), username: Type.String() })
export const AccountExport = Type.Object({
  format: Type.Literal('tern-export-1'),
  exported_at: Timestamp,
  profile: Type.Object({
    user_id: Type.Integer(),
    username: Type.String(),
    display_name: Type.String(),
    email: Nullable(Type.String()),
    email_verified: Type.Boolean(),
    phone: Nullable(Type.String()),
    bio: Type.String(),
    status: Type.String(),
    status_emoji: Type.String(),
    birthday: Nullable(Type.String()),
    link: Nullable(Type.String()),
    avatar_url: Nullable(Type.String()),
    privacy: Type.Object({ last_seen: Type.String(), phone: Type.String(), avatar: Type.String() }),
    two_factor_enabled: Type.Boolean(),
    has_password: Type.Boolean(),
    is_premium: Type.Boolean(),
    premium_expires_at: Nullable(Timestamp),
    created_at: Timestamp,
    last_seen: Nullable(Timestamp),
  }),
  settings: Type.Record(Type.String(), Type.Unknown()),
  sessions: Type.Array(
    Type.Object({
      id: Type.Integer(),
      session_token: Type.String({ description: 'masked: the first 6 characters and an ellipsis' }),
      device: Nullable(Type.String()),
      ip_address: Nullable(Type.String()),
      user_agent: Nullable(Type.String()),
      method: Type.String(),
      is_current: Type.Boolean(),
      last_active: Timestamp,
      created_at: Timestamp,
    }),
  ),
  contacts: Type.Array(
    Type.Object({ user_id: Type.Integer(), username: Type.String(), custom_name: Nullable(Type.String()), added_at: Timestamp }),
  ),
  blocked_users: Type.Array(
    Type.Object({ user_id: Type.Integer(), username: Type.String(), reason: Nullable(Type.String()), blocked_at: Timestamp }),
  ),
  chats: Type.Array(
    Type.Object({
      chat_id: Type.Integer(),
      type: Type.Union([Type.Literal('personal'), Type.Literal('group'), Type.Literal('channel')]),
      title: Nullable(Type.String()),
      role: Type.String(),
      joined_at: Timestamp,
      peer: Nullable(Someone),
    }),
  ),
  messages_sent: Type.Array(
    Type.Object({
      message_id: Type.Integer(),
      chat_id: Type.Integer(),
      content: Type.String(),
      reply_to_id: Nullable(Type.Integer()),
      file_name: Nullable(Type.String()),
      file_type: Nullable(Type.String()),
      file_size: Nullable(Type.Integer()),
      timestamp: Timestamp,
      edited_at: Nullable(Timestamp),
    }),
  ),
  saved_messages: Type.Array(
    Type.Object({
      message_id: Type.Integer(),
      chat_id: Type.Integer(),
      sender: Someone,
      saved_at: Timestamp,
      content: Type.Optional(Type.String({ description: 'only for my own messages' })),
      timestamp: Type.Optional(Timestamp),
    }),
  ),
  stories: Type.Array(
    Type.Object({
      story_id: Type.Integer(),
      media_type: Type.String(),
      caption: Type.String(),
      privacy: Type.String(),
      view_count: Type.Integer(),
      like_count: Type.Integer(),
      created_at: Timestamp,
      expires_at: Timestamp,
    }),
  ),
  premium_orders: Type.Array(Type.Object({ ...Order.properties, months: Type.Integer() })),
})
