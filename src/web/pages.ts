/**
 * The V1 pages of the web client: the landing page, sign-in and registration
 * forms, /join?ref=, the invite previews (web/invites.ts) and the bot web-app placeholder. They
 * live in one encapsulated scope with their own CSP (nothing inline), HTML error pages and a CSRF
 * token on every form (@fastify/csrf-protection, its secret in the HttpOnly `tern_csrf` cookie),
 * like the admin panel. Signing in sets the `tern_session` cookie that the app at /app and the
 * JSON API then use (with the CSRF header, http/auth.ts).
 */
import csrf from '@fastify/csrf-protection'
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Type, type Static } from 'typebox'
import type { AppContext } from '../context.js'
import { SESSION_COOKIE, useCookies } from '../http/auth.js'
import { AppError, validationMessage } from '../http/errors.js'
import type { RateLimiters } from '../http/rate-limit.js'
import { validatorCompiler } from '../http/validation.js'
import { useForms } from './forms.js'
import { pageError } from './page-errors.js'
import { RegisterBody, type AuthResult } from '../modules/auth/index.js'
import * as auth from '../modules/auth/index.js'
import * as referrals from '../modules/referrals/index.js'
import * as stats from '../modules/stats/index.js'
import * as users from '../modules/users/index.js'
import { ADMIN_PANEL_PATH } from './routes.js'
import { html, type Markup } from './admin/markup.js'
import { invitePages } from './invites.js'
import { resetPasswordPages } from './reset-password.js'
import {
  APP_PATH,
  LOGIN_JS,
  PAGES_CSRF_COOKIE,
  REF_COOKIE,
  REF_COOKIE_SECONDS,
  SITE_CSS,
  cookieUser,
  formToken,
  loginTo,
  overHttps,
  safeNext,
  sendPage,
  sessionCookie,
  siteHeaders,
  sitePage,
  staleCookie,
} from './site.js'

export interface PagesOptions {
  ctx: AppContext
  limiters: RateLimiters
}

function errorPage() {
  return (error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    const { status, message } = pageError(error, request, reply, 'this site')
    return sendPage(
      reply,
      sitePage(
        status === 403 ? 'Refused' : `Error ${status}`,
        html`<p class="error" role="alert">${message}</p>
<p><a href="/">Back to the start page</a></p>`,
      ),
      status,
    )
  }
}

const client = (request: FastifyRequest): auth.ClientInfo => ({ ipAddress: request.ip, userAgent: request.headers['user-agent'] ?? null })

const LoginForm = Type.Object(
  {
    login: Type.String({ maxLength: 254 }),
    password: Type.String({ maxLength: 256 }),
    next: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
)
const TotpForm = Type.Object(
  { ticket: Type.String({ maxLength: 128 }), code: Type.String({ maxLength: 32 }), next: Type.Optional(Type.String({ maxLength: 2048 })) },
  { additionalProperties: false },
)
const RegisterForm = Type.Object(
  {
    username: Type.String({ maxLength: 64 }),
    password: Type.String({ maxLength: 512 }),
    email: Type.Optional(Type.String({ maxLength: 512 })),
    display_name: Type.Optional(Type.String({ maxLength: 512 })),
    next: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
)
const NextQuery = Type.Object({ next: Type.Optional(Type.String({ maxLength: 2048 })) })
const JoinQuery = Type.Object({ ref: Type.Optional(Type.String({ maxLength: 64 })) })
const WebAppQuery = Type.Object({ bot: Type.Optional(Type.String({ maxLength: 64 })) })

const USERNAME = /^[A-Za-z0-9_]{3,32}$/

/** The API's own check of a registration (RegisterBody), for the form's fields. */
const checkRegistration = validatorCompiler({ schema: RegisterBody, method: 'POST', url: '/register', httpPart: 'body' }) as unknown as ((
  data: unknown,
) => boolean | { error: Error }) & {
  errors?: unknown[] | null
}

function registrationProblem(input: Record<string, unknown>): string | null {
  const result = checkRegistration(input)
  if (result === true) return null
  if (typeof result === 'object') return result.error.message
  return validationMessage({
    validation: checkRegistration.errors ?? [],
    validationContext: 'body',
    message: 'invalid',
  } as unknown as FastifyError)
}

function loginForm(reply: FastifyReply, options: { next: string; error?: string; login?: string; notice?: string }): Markup {
  return html`${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<div class="columns">
<section aria-labelledby="with-password">
<h2 id="with-password">With your password</h2>
<form method="post" action="/login" class="stack">
${formToken(reply)}
<input type="hidden" name="next" value="${options.next}">
<label for="login">Username or email
<input id="login" name="login" type="text" autocomplete="username" required maxlength="254" value="${options.login ?? ''}"></label>
<label for="password">Password
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256"></label>
<div><button type="submit">Sign in</button></div>
</form>
<p><a href="/forgot-password">Forgot your password?</a></p>
<p>New here? <a href="/register${options.next === APP_PATH ? '' : `?next=${encodeURIComponent(options.next)}`}">Create an account</a></p>
</section>
<section aria-labelledby="with-qr" class="qr" id="qr-login" data-next="${options.next}">
<h2 id="with-qr">With a QR code</h2>
<figure></figure>
<p class="qr-state muted" aria-live="polite">Signing in with a QR code needs JavaScript: the code appears here.</p>
<p class="qr-choice" hidden><button type="button" data-qr="login">Sign in</button> <button type="button" class="secondary" data-qr="decline">Not me</button></p>
</section>
</div>`
}

function totpForm(reply: FastifyReply, ticket: string, next: string, error?: string): Markup {
  return html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/login/totp" class="stack">
${formToken(reply)}
<input type="hidden" name="ticket" value="${ticket}">
<input type="hidden" name="next" value="${next}">
<label for="code">The 6-digit code from your authenticator app, or a recovery code
<input id="code" name="code" type="text" inputmode="text" autocomplete="one-time-code" maxlength="32" required></label>
<div><button type="submit">Verify</button></div>
</form>
<p><a href="${loginTo(next)}">Start over</a></p>`
}

function registerForm(
  reply: FastifyReply,
  options: { next: string; error?: string; values?: Record<string, string | undefined>; invitedBy?: string | null },
): Markup {
  const v = options.values ?? {}
  return html`${options.invitedBy ? html`<p class="notice" role="status">Invited by <strong>@${options.invitedBy}</strong>.</p>` : ''}${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<form method="post" action="/register" class="stack">
${formToken(reply)}
<input type="hidden" name="next" value="${options.next}">
<label for="username">Username (3 to 32 letters, digits or underscores)
<input id="username" name="username" type="text" autocomplete="username" required maxlength="32" pattern="[A-Za-z0-9_]{3,32}" value="${v.username ?? ''}"></label>
<label for="display_name">Display name (optional)
<input id="display_name" name="display_name" type="text" autocomplete="name" maxlength="64" value="${v.display_name ?? ''}"></label>
<label for="email">Email (optional: for signing in with a code and recovering the account)
<input id="email" name="email" type="email" autocomplete="email" maxlength="254" value="${v.email ?? ''}"></label>
<label for="password">Password (at least 8 characters)
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="256"></label>
<div><button type="submit">Create the account</button></div>
</form>
<p>Already have one? <a href="${loginTo(options.next)}">Sign in</a></p>`
}

/** A finished sign-in: the session cookie (and a fresh CSRF secret), then where the person was going. */
function signIn(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, result: AuthResult, next: string) {
  reply.setCookie(SESSION_COOKIE, result.session_token, sessionCookie(ctx, request))
  reply.clearCookie(PAGES_CSRF_COOKIE, { path: '/' })
  return reply.redirect(safeNext(next), 303)
}

const refOf = (request: FastifyRequest) => {
  const ref = request.cookies[REF_COOKIE]
  return typeof ref === 'string' && USERNAME.test(ref) ? ref : null
}

export const webPages: FastifyPluginAsync<PagesOptions> = async (app, { ctx, limiters }) => {
  await useCookies(app)
  await app.register(csrf, {
    cookieKey: PAGES_CSRF_COOKIE,
    cookieOpts: { path: '/', httpOnly: true, sameSite: 'lax', secure: ctx.config.publicBaseUrl.startsWith('https:') },
    getToken: (request) => (request.body as { _csrf?: string } | undefined)?._csrf,
  })
  const headers = siteHeaders(ctx.config.publicBaseUrl)
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers)
    done()
  })
  useForms(app, 'Forms are accepted only from this site’s own pages.')
  app.setErrorHandler(errorPage())

  app.get('/pages/site.css', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('text/css; charset=utf-8').send(SITE_CSS),
  )
  app.get('/pages/login.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('text/javascript; charset=utf-8').send(LOGIN_JS),
  )

  app.get('/', { schema: { summary: 'The landing page; signed in: the app', tags: ['service'], hide: true } }, async (request, reply) => {
    if ((request.headers.host ?? '').toLowerCase().startsWith('admin.')) return reply.redirect(ADMIN_PANEL_PATH)
    const found = await cookieUser(ctx, request)
    if (found) return reply.redirect(APP_PATH, 303)
    if (staleCookie(request, found)) {
      reply.clearCookie(SESSION_COOKIE, { path: '/' })
      return reply.redirect('/login', 303)
    }
    const figures = await stats.publicStats(ctx)
    return sendPage(
      reply,
      sitePage(
        'Tern',
        html`<p>An open-source messenger: personal chats, groups, channels, stories, calls and bots.</p>
<p><a class="button" href="/login">Sign in</a> <a class="button" href="/register">Create an account</a></p>
<p class="muted">${figures.users} registered ${figures.users === 1 ? 'user' : 'users'}.</p>
<h2>For developers</h2>
<ul>
  <li><a href="/docs">API documentation</a> (<a href="/openapi.json">OpenAPI 3</a>, <a href="/asyncapi.json">AsyncAPI 3</a> for the real-time gateway)</li>
  <li>Bearer API at <code>/api.v2/api</code>; real-time gateway at <code>/api.v2/api/ws</code></li>
  <li><a href="/health">Health</a> · <a href="/stats">Statistics</a></li>
</ul>`,
      ),
    )
  })

  app.get<{ Querystring: Static<typeof NextQuery> }>(
    '/login',
    { schema: { hide: true, querystring: NextQuery } },
    async (request, reply) => {
      const next = safeNext(request.query.next)
      if (await cookieUser(ctx, request)) return reply.redirect(next, 303)
      return sendPage(reply, sitePage('Sign in', loginForm(reply, { next }), { scripts: ['/pages/login.js'] }))
    },
  )

  app.post<{ Body: Static<typeof LoginForm> }>(
    '/login',
    { schema: { hide: true, body: LoginForm }, onRequest: limiters.login },
    async (request, reply) => {
      const { login, password } = request.body
      const next = safeNext(request.body.next)
      const again = (status: number, error: string) =>
        sendPage(reply, sitePage('Sign in', loginForm(reply, { next, error, login }), { scripts: ['/pages/login.js'] }), status)
      if (!login.trim() || !password) return again(400, 'Enter your username or email and your password.')
      let result: AuthResult | auth.TotpRequired
      try {
        result = await auth.login(ctx, { login: login.trim(), password, device: 'Web browser' }, client(request))
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 401)
          return again(401, 'Wrong username, email or password, or the account is suspended.')
        if (error instanceof AppError && error.statusCode === 429) {
          reply.headers(error.headers)
          return again(429, error.message)
        }
        throw error
      }
      if ('next' in result) return sendPage(reply, sitePage('Two-factor code', totpForm(reply, result.ticket, next)))
      return signIn(ctx, request, reply, result, next)
    },
  )

  app.post<{ Body: Static<typeof TotpForm> }>(
    '/login/totp',
    { schema: { hide: true, body: TotpForm }, onRequest: limiters.login },
    async (request, reply) => {
      const { ticket, code } = request.body
      const next = safeNext(request.body.next)
      let result: AuthResult
      try {
        result = await auth.finishTotp(ctx, ticket, code.replace(/\s+/g, ''), client(request))
      } catch (error) {
        if (error instanceof AppError && error.statusCode < 500) {
          reply.headers(error.headers)
          return sendPage(reply, sitePage('Two-factor code', totpForm(reply, ticket, next, error.message)), error.statusCode)
        }
        throw error
      }
      return signIn(ctx, request, reply, result, next)
    },
  )

  app.get<{ Querystring: Static<typeof NextQuery> }>(
    '/register',
    { schema: { hide: true, querystring: NextQuery } },
    async (request, reply) => {
      const next = safeNext(request.query.next)
      if (await cookieUser(ctx, request)) return reply.redirect(next, 303)
      return sendPage(reply, sitePage('Create an account', registerForm(reply, { next, invitedBy: refOf(request) })))
    },
  )

  app.post<{ Body: Static<typeof RegisterForm> }>(
    '/register',
    { schema: { hide: true, body: RegisterForm }, onRequest: limiters.register },
    async (request, reply) => {
      const { username, password } = request.body
      const email = request.body.email?.trim() || undefined
      const displayName = request.body.display_name?.trim() || undefined
      const next = safeNext(request.body.next)
      const invitedBy = refOf(request)
      const again = (status: number, error: string) =>
        sendPage(
          reply,
          sitePage(
            'Create an account',
            registerForm(reply, { next, error, invitedBy, values: { username, email, display_name: displayName } }),
          ),
          status,
        )
      const input: Record<string, string> = { username: username.trim(), password }
      if (email !== undefined) input.email = email
      if (displayName !== undefined) input.display_name = displayName
      const problem = registrationProblem(input)
      if (problem) return again(400, problem)
      let result: AuthResult
      try {
        result = await auth.register(ctx, input as RegisterBody, client(request))
      } catch (error) {
        if (error instanceof AppError && error.statusCode < 500) return again(error.statusCode, error.message)
        throw error
      }
      if (invitedBy) {
        // as POST V2/referrals/invite would: once, and an unknown or own name is no error here
        try {
          const me = await users.getUser(ctx, result.user.user_id)
          await referrals.invitedBy(ctx, me, { ref: invitedBy })
        } catch (error) {
          if (!(error instanceof AppError && error.statusCode < 500)) throw error
          request.log.info({ ref: invitedBy, err: error.message }, 'web register: referral not recorded')
        }
        reply.clearCookie(REF_COOKIE, { path: '/' })
      }
      return signIn(ctx, request, reply, result, next)
    },
  )

  app.get<{ Querystring: Static<typeof JoinQuery> }>(
    '/join',
    {
      schema: {
        summary: 'A referral link: remembers who invited, then registration (or the app)',
        tags: ['service'],
        hide: true,
        querystring: JoinQuery,
      },
    },
    async (request, reply) => {
      const ref = request.query.ref
      if (await cookieUser(ctx, request)) return reply.redirect(APP_PATH, 303)
      if (ref !== undefined && USERNAME.test(ref)) {
        reply.setCookie(REF_COOKIE, ref, {
          path: '/',
          httpOnly: true,
          sameSite: 'lax',
          secure: overHttps(ctx, request),
          maxAge: REF_COOKIE_SECONDS,
        })
      }
      return reply.redirect('/register', 303)
    },
  )

  await app.register(invitePages, { ctx })
  await app.register(resetPasswordPages, { ctx, limiters })

  app.get<{ Querystring: Static<typeof WebAppQuery> }>(
    '/webapp/static',
    { schema: { summary: 'The bot web-app placeholder page', tags: ['service'], hide: true, querystring: WebAppQuery } },
    async (request, reply) => {
      const name = request.query.bot
      const bot = name !== undefined && USERNAME.test(name) ? await users.findByUsername(ctx, name) : undefined
      const found = bot && bot.is_bot === 1 && bot.deleted_at === null ? bot : null
      const signedIn = await cookieUser(ctx, request)
      const intro = found
        ? html`<p>You opened the web app of the bot <strong>${found.display_name || found.username}</strong> (@${found.username}).</p>
${found.bot_webapp_url ? html`<p>Its owner has set it up at an address of their own; open it from a chat with the bot in the app.</p>` : html`<p>Its owner has not set up a web app for it yet, so there is nothing to show here.</p>`}`
        : name !== undefined
          ? html`<p class="error" role="alert">There is no bot named @${name}.</p>`
          : ''
      return sendPage(
        reply,
        sitePage(
          'Bot web apps',
          html`${intro}
<p>A bot web app is a small web page a bot opens inside Tern: a shop, a form, a game. It runs in the app beside the chat with the bot,
and what you do in it reaches the bot, which answers in the chat.</p>
<p>This is the placeholder Tern shows when a bot has no web app of its own.</p>
<p><a href="${found ? `${APP_PATH}` : '/'}">${found ? 'Back to Tern' : 'To the start page'}</a></p>`,
          { signedInAs: signedIn?.user.username ?? null },
        ),
      )
    },
  )
}
