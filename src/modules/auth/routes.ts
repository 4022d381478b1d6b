import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { SESSION_COOKIE, requireUser, useCookies } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import { validationError } from '../../http/errors.js'
import { Me } from '../../http/schemas.js'
import type { RateLimiters } from '../../http/rate-limit.js'
import * as auth from './service.js'
import {
  AccountDeleted,
  AccountExport,
  AuthResult,
  ChangeEmailBody,
  ChangePasswordBody,
  DeleteAccountBody,
  ForgotPasswordBody,
  PasswordChanged,
  PasswordReset,
  ResetCodeSent,
  ResetPasswordBody,
  StepCodeSent,
  CodeBody,
  EmailChanged,
  EmailVerified,
  LoginBody,
  LoginResult,
  LoginV3Body,
  LoginV3Result,
  MessageResult,
  OAuthBody,
  QrCodeResult,
  QrGenerateBody,
  QrRequestResult,
  QrStatusBody,
  QrStatusResult,
  QrStepBody,
  QrStepResult,
  QrDeviceBody,
  QrTokenBody,
  RegisterBody,
  TotpLoginBody,
  TwoFactorSetupResult,
  TwoFactorState,
  VerificationSent,
  VerifyEmailBody,
} from './schemas.js'
import { deleteAccount } from './account.js'
import * as emailVerification from './email-verification.js'
import { exportAccount } from './export.js'
import { loginV3 } from './login-v3.js'
import * as oauth from './oauth.js'
import { changePassword, forgotPassword, resetPassword } from './password.js'
import { requestStepCode } from './proof.js'
import * as qr from './qr-login.js'
import * as twoFactor from './two-factor.js'

export interface AuthRoutesOptions {
  ctx: AppContext
  limiters: RateLimiters
  /** the V1 mount (/api/auth): login also opens the HttpOnly cookie session used by V1 routes */
  cookieSession?: boolean
}

const clientOf = (request: FastifyRequest): auth.ClientInfo => ({
  ipAddress: request.ip,
  userAgent: request.headers['user-agent'] ?? null,
})

export const authRoutes: FastifyPluginAsyncTypebox<AuthRoutesOptions> = async (app, { ctx, limiters, cookieSession }) => {
  if (cookieSession) await useCookies(app)
  const setCookie = (reply: FastifyReply, token: string) => {
    if (!cookieSession) return
    reply.setCookie(SESSION_COOKIE, token, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: ctx.config.publicBaseUrl.startsWith('https:'),
      maxAge: ctx.config.sessionTtlDays * 86_400,
    })
  }

  app.post(
    '/register',
    {
      schema: { summary: 'Create an account and sign in', tags: ['auth'], body: RegisterBody, response: { 201: okSchema(AuthResult) } },
      onRequest: limiters.register,
    },
    async (request, reply) => {
      const result = await auth.register(ctx, request.body, clientOf(request))
      setCookie(reply, result.session_token)
      return reply.code(201).send(ok(result))
    },
  )

  app.post(
    '/login',
    {
      schema: {
        summary: 'Sign in with a username or email and a password',
        description: 'With two-factor authentication on, the answer is `{next: "totp", ticket}`: finish with `login/totp`.',
        tags: ['auth'],
        body: LoginBody,
        response: { 200: okSchema(LoginResult) },
      },
      onRequest: limiters.login,
    },
    async (request, reply) => {
      const result = await auth.login(ctx, request.body, clientOf(request))
      if ('session_token' in result) setCookie(reply, result.session_token)
      return ok(result)
    },
  )

  app.post(
    '/login/totp',
    {
      schema: {
        summary: 'Finish a login with its ticket and a TOTP (or recovery) code',
        tags: ['auth'],
        body: TotpLoginBody,
        response: { 200: okSchema(AuthResult) },
      },
      onRequest: limiters.login,
    },
    async (request, reply) => {
      const result = await auth.finishTotp(ctx, request.body.ticket, request.body.code, clientOf(request))
      setCookie(reply, result.session_token)
      return ok(result)
    },
  )

  app.post(
    '/login_v3',
    {
      schema: {
        summary: 'Sign in step by step: email, send_otp, verify_otp, password, totp',
        description:
          '`email {email}` → `{exists, methods}`; `send_otp {email}` mails a 6-digit code → `{sent, expires_in, resend_in}`; ' +
          '`verify_otp {email, code}` and `password {email, password}` → `{session_token, user}` or, with two-factor on, `{next: "totp", ticket}`; ' +
          '`totp {ticket, code}` → `{session_token, user}`.',
        tags: ['auth'],
        body: LoginV3Body,
        response: { 200: okSchema(LoginV3Result) },
      },
      // one limiter per request (they share the plugin's once-per-request mark): the lookup has its own, tighter one
      preHandler: (request, reply) =>
        (request.body.step === 'email' ? limiters.loginLookup : limiters.login).call(app, request, reply, () => {}),
    },
    async (request, reply) => {
      const result = await loginV3(ctx, request.body, clientOf(request))
      if ('session_token' in result) setCookie(reply, result.session_token)
      return ok(result)
    },
  )

  // QR login (qr-login.ts): six paths, and `qr {step}` as their alias
  const qrStatus = (
    _request: FastifyRequest,
    reply: FastifyReply,
    body: { token?: string; secret?: string; wait?: number; since?: qr.QrStatus },
  ) => {
    // a long poll ends early when its client goes away
    const gone = new AbortController()
    reply.raw.once('close', () => gone.abort())
    return qr.status(ctx, body.token ?? '', body.secret ?? '', body.wait ?? 0, body.since ?? 'pending', gone.signal)
  }
  const qrLogin = async (request: FastifyRequest, reply: FastifyReply, token: string, secret: string) => {
    const result = await qr.login(ctx, token, secret, clientOf(request))
    setCookie(reply, result.session_token)
    return result
  }
  const signedIn = requireUser(ctx)

  app.post(
    '/qr/generate',
    {
      schema: {
        summary: 'QR login, new device: a code to show (2 minutes, single use)',
        tags: ['auth'],
        body: QrGenerateBody,
        response: { 200: okSchema(QrCodeResult) },
      },
      onRequest: limiters.qrGenerate,
      // a POST without a body asks for a code too
      preValidation: async (request) => {
        request.body ??= {}
      },
    },
    async (request) => ok(await qr.generate(ctx, clientOf(request), request.body.device ?? null)),
  )

  app.post(
    '/qr/request',
    {
      schema: {
        summary: 'QR login, signed-in device: I scanned this code; who asks?',
        tags: ['auth'],
        security: [{ bearer: [] }],
        body: QrTokenBody,
        response: { 200: okSchema(QrRequestResult) },
      },
      preHandler: signedIn,
    },
    async (request) => ok(await qr.request(ctx, request.user.id, request.body.token)),
  )

  app.post(
    '/qr/authorize',
    {
      schema: {
        summary: 'QR login, signed-in device: approve the code I scanned',
        tags: ['auth'],
        security: [{ bearer: [] }],
        body: QrTokenBody,
        response: { 200: okSchema(QrStatusResult) },
      },
      preHandler: signedIn,
    },
    async (request) =>
      ok(
        await qr.authorize(
          ctx,
          request.user.id,
          { id: request.sessionId, twoFactorVerified: request.twoFactorVerified },
          request.body.token,
        ),
      ),
  )

  app.post(
    '/qr/status',
    {
      schema: {
        summary: 'QR login, new device: pending, scanned, authorized, used or expired, and which account scanned it',
        description:
          'Needs the `secret` generate answered (else 404, as for an unknown code). With `wait` (seconds, at most 25) the answer comes as soon as the status is no longer `since` (default pending), or when the wait is over.',
        tags: ['auth'],
        body: QrStatusBody,
        response: { 200: okSchema(QrStatusResult) },
      },
    },
    async (request, reply) => ok(await qrStatus(request, reply, request.body)),
  )

  app.post(
    '/qr/login',
    {
      schema: {
        summary: 'QR login, new device: the session, once the code is approved (once; needs the secret)',
        tags: ['auth'],
        body: QrDeviceBody,
        response: { 200: okSchema(AuthResult) },
      },
      onRequest: limiters.login,
    },
    async (request, reply) => ok(await qrLogin(request, reply, request.body.token, request.body.secret)),
  )

  app.post(
    '/qr/decline',
    {
      schema: {
        summary: 'QR login, new device: not this account — the code is pending again, for its owner to scan',
        tags: ['auth'],
        body: QrDeviceBody,
        response: { 200: okSchema(QrStatusResult) },
      },
    },
    async (request) => ok(await qr.decline(ctx, request.body.token, request.body.secret)),
  )

  app.post(
    '/qr',
    {
      schema: {
        summary: 'QR login in one path: `{step, …}` with step generate, request, status, authorize, login or decline',
        tags: ['auth'],
        body: QrStepBody,
        response: { 200: okSchema(QrStepResult) },
      },
      preHandler: async (request, reply) => {
        const { step } = request.body
        if (step === 'request' || step === 'authorize') return signedIn(request, reply)
        if (step === 'generate') return limiters.qrGenerate.call(app, request, reply, () => {})
        if (step === 'login') return limiters.login.call(app, request, reply, () => {})
      },
    },
    async (request, reply) => {
      const body = request.body
      if (body.step !== 'generate' && body.token === undefined) throw validationError(`token is required for step ${body.step}`)
      if ((body.step === 'status' || body.step === 'login' || body.step === 'decline') && body.secret === undefined)
        throw validationError(`secret is required for step ${body.step}`)
      const token = body.token ?? ''
      const secret = body.secret ?? ''
      switch (body.step) {
        case 'generate':
          return ok(await qr.generate(ctx, clientOf(request), body.device ?? null))
        case 'request':
          return ok(await qr.request(ctx, request.user.id, token))
        case 'authorize':
          return ok(
            await qr.authorize(ctx, request.user.id, { id: request.sessionId, twoFactorVerified: request.twoFactorVerified }, token),
          )
        case 'status':
          return ok(await qrStatus(request, reply, body))
        case 'login':
          return ok(await qrLogin(request, reply, token, secret))
        case 'decline':
          return ok(await qr.decline(ctx, token, secret))
      }
    },
  )

  app.post(
    '/oauth/:provider',
    {
      schema: {
        summary: 'Sign in with an OpenID Connect provider: an authorization code, or an id_token',
        description:
          "`{code, redirect_uri, code_verifier?, nonce?}` (exchanged with client_secret_basic) or `{id_token, nonce?}` (verified against the issuer's keys). " +
          'Answers `{session_token, user}`, or with two-factor on `{next: "totp", ticket}`.',
        tags: ['auth'],
        params: Type.Object({ provider: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: OAuthBody,
        response: { 200: okSchema(LoginResult) },
      },
      onRequest: limiters.login,
    },
    async (request, reply) => {
      const result = await oauth.signIn(ctx, request.params.provider, request.body, clientOf(request))
      if ('session_token' in result) setCookie(reply, result.session_token)
      return ok(result)
    },
  )

  app.post(
    '/verify-email',
    {
      schema: {
        summary: 'Confirm an email address with the token of its link',
        tags: ['auth'],
        body: VerifyEmailBody,
        response: { 200: okSchema(EmailVerified) },
      },
      onRequest: limiters.login,
    },
    async (request) => ok(await emailVerification.verifyEmail(ctx, request.body.token)),
  )

  app.post(
    '/verify-email/resend',
    {
      schema: {
        summary: 'Mail a new confirmation link to my email address',
        tags: ['auth'],
        security: [{ bearer: [] }],
        response: { 200: okSchema(VerificationSent) },
      },
      preValidation: requireUser(ctx),
    },
    async (request) => ok(await emailVerification.resendVerification(ctx, request.user.id)),
  )

  app.post(
    '/email',
    {
      schema: {
        summary: 'Change my email address (unconfirmed until its link is opened)',
        tags: ['auth'],
        security: [{ bearer: [] }],
        body: ChangeEmailBody,
        response: { 200: okSchema(EmailChanged) },
      },
      preValidation: requireUser(ctx),
    },
    async (request) => ok(await emailVerification.changeEmail(ctx, request.user.id, request.body)),
  )

  app.post(
    '/2fa/setup',
    {
      schema: {
        summary: 'Start turning on two-factor authentication: a new TOTP secret (not active until 2fa/enable)',
        tags: ['auth'],
        security: [{ bearer: [] }],
        response: { 200: okSchema(TwoFactorSetupResult) },
      },
      preValidation: requireUser(ctx),
    },
    async (request) => ok(await twoFactor.setup(ctx, request.user.id)),
  )

  app.post(
    '/2fa/enable',
    {
      schema: {
        summary: 'Turn on two-factor authentication with a current code; answers 10 recovery codes, once',
        tags: ['auth'],
        security: [{ bearer: [] }],
        body: CodeBody,
        response: { 200: okSchema(TwoFactorState) },
      },
      preValidation: requireUser(ctx),
    },
    async (request) => ok(await twoFactor.enable(ctx, request.user.id, request.body.code)),
  )

  app.post(
    '/2fa/disable',
    {
      schema: {
        summary: 'Turn off two-factor authentication with a current code or a recovery code',
        tags: ['auth'],
        security: [{ bearer: [] }],
        body: CodeBody,
        response: { 200: okSchema(TwoFactorState) },
      },
      preValidation: requireUser(ctx),
    },
    async (request) => ok(await twoFactor.disable(ctx, request.user.id, request.body.code)),
  )

  app.post(
    '/password',
    {
      schema: {
        summary: 'Change my password (or set one); my other sessions end',
        description:
          'An account with a password gives `current_password`; one without gives `code`: a TOTP (or recovery) code when two-factor is on, ' +
          "else a code from `password/code`. Wrong ones count against the account's guessing limit. Every other session of mine is signed out; this one stays.",
        tags: ['auth'],
        security: [{ bearer: [] }],
        body: ChangePasswordBody,
        response: { 200: okSchema(PasswordChanged) },
      },
      preValidation: requireUser(ctx),
    },
    async (request) => ok(await changePassword(ctx, request.user.id, request.sessionId, request.body)),
  )

  app.post(
    '/password/code',
    {
      schema: {
        summary: 'Mail me a code to set a password (accounts without a password or two-factor)',
        tags: ['auth'],
        security: [{ bearer: [] }],
        response: { 200: okSchema(StepCodeSent) },
      },
      preValidation: requireUser(ctx),
    },
    async (request) => ok(await requestStepCode(ctx, request.user.id, 'set_password')),
  )

  app.post(
    '/password/forgot',
    {
      schema: {
        summary: 'Forgot my password: mail a reset code and link to this address',
        description:
          'The same answer whether or not an account has the address. Limited per client IP (PASSWORD_RESET_RATE_LIMIT) and per address (PASSWORD_RESET_EMAIL_RATE_LIMIT).',
        tags: ['auth'],
        body: ForgotPasswordBody,
        response: { 200: okSchema(ResetCodeSent) },
      },
    },
    async (request) => ok(await forgotPassword(ctx, request.body.email, request.ip)),
  )

  app.post(
    '/password/reset',
    {
      schema: {
        summary: 'Set a new password with the mailed reset code; every session of the account ends',
        tags: ['auth'],
        body: ResetPasswordBody,
        response: { 200: okSchema(PasswordReset) },
      },
      onRequest: limiters.login,
    },
    async (request) => ok(await resetPassword(ctx, request.body)),
  )

  app.post(
    '/delete-account/code',
    {
      schema: {
        summary: 'Mail me a code to delete my account (accounts without a password or two-factor)',
        tags: ['auth'],
        security: [{ bearer: [] }],
        response: { 200: okSchema(StepCodeSent) },
      },
      preValidation: requireUser(ctx),
    },
    async (request) => ok(await requestStepCode(ctx, request.user.id, 'delete_account')),
  )

  app.post(
    '/delete-account',
    {
      schema: {
        summary: 'Delete my account: personal data erased, every session ended',
        description:
          '`{password}`, or for an account without one `{code}` (TOTP, or from `delete-account/code`). ' +
          'Messages stay in others\' chats as from "Deleted account"; the username is held back for ACCOUNT_USERNAME_GRACE_DAYS.',
        tags: ['auth'],
        security: [{ bearer: [] }],
        body: DeleteAccountBody,
        response: { 200: okSchema(AccountDeleted) },
      },
      preValidation: requireUser(ctx),
    },
    async (request, reply) => {
      const result = await deleteAccount(ctx, request.user.id, request.body)
      if (cookieSession) reply.clearCookie(SESSION_COOKIE, { path: '/' })
      return ok(result)
    },
  )

  app.get(
    '/export',
    {
      schema: {
        summary: 'Download my data: one JSON document (an attachment)',
        description:
          'Profile, settings, sessions (tokens masked), contacts, blocked users, chats, the messages I sent, saved messages, stories and premium orders; ' +
          'other people as ids and usernames only. Streamed; once per ACCOUNT_EXPORT_RATE_LIMIT window (default a minute).',
        tags: ['auth'],
        security: [{ bearer: [] }],
        response: { 200: okSchema(AccountExport) },
      },
      preValidation: requireUser(ctx),
    },
    async (request, reply) => {
      const { filename, stream } = await exportAccount(ctx, request.user.id, request.sessionId)
      // the stream writes the document the schema describes (a stream skips the serializer)
      return (reply as FastifyReply)
        .type('application/json; charset=utf-8')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .header('cache-control', 'no-store')
        .send(stream)
    },
  )

  app.post(
    '/logout',
    {
      schema: {
        summary: 'End the current session and close its sockets',
        tags: ['auth'],
        security: [{ bearer: [] }],
        response: { 200: okSchema(MessageResult) },
      },
      preValidation: requireUser(ctx),
    },
    async (request, reply) => {
      await auth.logout(ctx, request.user.id, request.sessionId)
      if (cookieSession) reply.clearCookie(SESSION_COOKIE, { path: '/' })
      return ok({ message: 'Logged out' })
    },
  )

  app.get(
    '/me',
    {
      schema: { summary: 'The signed-in user', tags: ['auth'], security: [{ bearer: [] }], response: { 200: okSchema(Me) } },
      preValidation: requireUser(ctx),
    },
    async (request) => ok(await auth.me(ctx, request.user.id)),
  )
}
