/**
 * The pages of a forgotten password, inside the V1 pages' scope (web/pages.ts: its CSP, CSRF
 * tokens and form guard): `/forgot-password` asks for the address and mails a code
 * (auth/password.ts forgotPassword), `/reset-password` (the mail's link fills it in) takes the
 * code and a new password (resetPassword). Plain forms, no script.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { Type, type Static } from 'typebox'
import type { AppContext } from '../context.js'
import { AppError } from '../http/errors.js'
import type { RateLimiters } from '../http/rate-limit.js'
import { forgotPassword, readResetLinkToken, resetPassword } from '../modules/auth/index.js'
import { html, type Markup } from './admin/markup.js'
import { formToken, sendPage, sitePage } from './site.js'

const EMAIL = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/

const ForgotForm = Type.Object({ email: Type.String({ maxLength: 254 }) }, { additionalProperties: false })
const ResetQuery = Type.Object({ reset_token: Type.Optional(Type.String({ maxLength: 400 })) })
const ResetForm = Type.Object(
  { email: Type.String({ maxLength: 254 }), code: Type.String({ maxLength: 32 }), new_password: Type.String({ maxLength: 512 }) },
  { additionalProperties: false },
)

const problem = (error?: string) => (error ? html`<p class="error" role="alert">${error}</p>` : '')

function forgotForm(reply: FastifyReply, options: { email?: string; error?: string }): Markup {
  return html`${problem(options.error)}
<p>Enter the email address of your account. If an account has it, a code to choose a new password goes to it.</p>
<form method="post" action="/forgot-password" class="stack">
${formToken(reply)}
<label for="email">Email
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${options.email ?? ''}"></label>
<div><button type="submit">Send me a code</button></div>
</form>
<p><a href="/login">Back to sign in</a></p>`
}

function resetForm(reply: FastifyReply, options: { email?: string; code?: string; error?: string; notice?: string }): Markup {
  return html`${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}${problem(options.error)}
<form method="post" action="/reset-password" class="stack">
${formToken(reply)}
<label for="email">Email
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${options.email ?? ''}"></label>
<label for="code">The 6-digit code from the mail
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="32" value="${options.code ?? ''}"></label>
<label for="new_password">New password (at least 8 characters)
<input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="8" maxlength="256"></label>
<div><button type="submit">Set the new password</button></div>
</form>
<p><a href="/forgot-password">Send a new code</a> · <a href="/login">Back to sign in</a></p>`
}

export const resetPasswordPages: FastifyPluginAsync<{ ctx: AppContext; limiters: RateLimiters }> = async (app, { ctx, limiters }) => {
  app.get('/forgot-password', { schema: { hide: true } }, async (_request, reply) =>
    sendPage(reply.header('cache-control', 'no-store'), sitePage('Forgot your password?', forgotForm(reply, {}))),
  )

  app.post<{ Body: Static<typeof ForgotForm> }>(
    '/forgot-password',
    { schema: { hide: true, body: ForgotForm } },
    async (request, reply) => {
      const email = request.body.email.trim()
      if (!EMAIL.test(email))
        return sendPage(reply, sitePage('Forgot your password?', forgotForm(reply, { email, error: 'Enter a valid email address.' })), 400)
      try {
        await forgotPassword(ctx, email, request.ip)
      } catch (error) {
        if (!(error instanceof AppError) || error.statusCode >= 500) throw error
        reply.headers(error.headers)
        return sendPage(reply, sitePage('Forgot your password?', forgotForm(reply, { email, error: error.message })), error.statusCode)
      }
      const minutes = ctx.config.passwordResetCodeMinutes
      return sendPage(
        reply,
        sitePage(
          'Choose a new password',
          resetForm(reply, {
            email,
            notice: `If an account has this address, a code is on its way to it. It works for ${minutes} minutes.`,
          }),
        ),
      )
    },
  )

  // the mail's link: its reset_token fills the form in (nothing is checked until the form is sent)
  app.get<{ Querystring: Static<typeof ResetQuery> }>(
    '/reset-password',
    { schema: { hide: true, querystring: ResetQuery } },
    async (request, reply) => {
      const filled = request.query.reset_token === undefined ? undefined : readResetLinkToken(request.query.reset_token)
      return sendPage(
        reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer'),
        sitePage(
          'Choose a new password',
          resetForm(reply, {
            email: filled?.email,
            code: filled?.code,
            error:
              request.query.reset_token !== undefined && !filled
                ? 'This link is incomplete: enter your email and the code from the mail.'
                : undefined,
          }),
        ),
      )
    },
  )

  app.post<{ Body: Static<typeof ResetForm> }>(
    '/reset-password',
    { schema: { hide: true, body: ResetForm }, onRequest: limiters.login },
    async (request, reply) => {
      const email = request.body.email.trim()
      const code = request.body.code.replace(/\s+/g, '')
      const again = (status: number, error: string) =>
        sendPage(reply, sitePage('Choose a new password', resetForm(reply, { email, code, error })), status)
      if (!EMAIL.test(email)) return again(400, 'Enter a valid email address.')
      if (request.body.new_password.length < 8 || request.body.new_password.length > 256)
        return again(400, 'The new password must be 8 to 256 characters.')
      try {
        await resetPassword(ctx, { email, code, new_password: request.body.new_password })
      } catch (error) {
        if (!(error instanceof AppError) || error.statusCode >= 500) throw error
        reply.headers(error.headers)
        return again(error.statusCode, error.message)
      }
      return sendPage(
        reply,
        sitePage(
          'Password changed',
          html`<p class="notice" role="status">Your password is changed, and every session of the account is signed out.</p>
<p><a class="button" href="/login">Sign in</a></p>`,
        ),
      )
    },
  )
}
