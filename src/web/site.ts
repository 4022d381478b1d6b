/**
 * What the V1 web pages share (web/pages.ts, web/invites.ts, web/routes.ts): who is signed in by
 * the `tern_session` cookie, the cookie's flags, where a form may send someone next, the page
 * shell with its stylesheet and script served from this origin (so the CSP needs nothing inline),
 * and the CSP itself.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AppContext } from '../context.js'
import { cookieToken } from '../http/auth.js'
import { pageHeaders } from '../http/security-headers.js'
import * as sessions from '../modules/sessions/index.js'
import { html, type Markup } from './admin/markup.js'

export const APP_PATH = '/app'
/** the referrer a /join?ref=<username> visit remembers until registration (a day) */
export const REF_COOKIE = 'tern_ref'
export const REF_COOKIE_SECONDS = 86_400
/** the secret of the pages' CSRF tokens (@fastify/csrf-protection) */
export const PAGES_CSRF_COOKIE = 'tern_csrf'

/** The request came over https: itself (TRUST_PROXY decides whether X-Forwarded-Proto counts), or PUBLIC_BASE_URL says so. */
export function overHttps(ctx: AppContext, request: FastifyRequest): boolean {
  return request.protocol === 'https' || ctx.config.publicBaseUrl.startsWith('https:')
}

/** The session cookie: script-proof, sent on top-level navigations from other sites but not on their posts. */
export function sessionCookie(ctx: AppContext, request: FastifyRequest) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: overHttps(ctx, request),
    maxAge: ctx.config.sessionTtlDays * 86_400,
  }
}

/** Who the `tern_session` cookie signs in (the pages never take a bearer token), or null. */
export async function cookieUser(ctx: AppContext, request: FastifyRequest): Promise<sessions.Authenticated | null> {
  const token = cookieToken(request)
  return token ? sessions.authenticate(ctx, token) : null
}

/** The request carries a session cookie that no longer works (expired, ended, unknown). */
export const staleCookie = (request: FastifyRequest, found: sessions.Authenticated | null) =>
  found === null && cookieToken(request) !== null

/**
 * A `next` a form may send someone to after signing in: a path on this site ("/…", not "//…",
 * no backslash or control character, at most 512 characters); anything else is the app.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length > 512 || !next.startsWith('/') || next.startsWith('//')) return APP_PATH
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return APP_PATH
  return next
}

/** The login page's address that comes back to `next` afterwards. */
export const loginTo = (next: string) => `/login?next=${encodeURIComponent(next)}`

/** The pages' headers: helmet's document set with a CSP that allows nothing inline and nothing from elsewhere. */
export function siteHeaders(publicBaseUrl: string): Record<string, string> {
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    ...(publicBaseUrl.startsWith('https:') ? ['upgrade-insecure-requests'] : []),
  ].join('; ')
  return { ...pageHeaders(publicBaseUrl), 'content-security-policy': csp, 'cache-control': 'no-store' }
}

export interface SiteOptions {
  /** scripts of this origin to load (deferred) */
  scripts?: string[]
  /** a signed-in user's name for the header */
  signedInAs?: string | null
}

/** A whole page: `body` is markup (html``), so every value in it was escaped. */
export function sitePage(title: string, body: Markup, options: SiteOptions = {}): string {
  const who = options.signedInAs
    ? html`<span class="who">Signed in as <strong>${options.signedInAs}</strong> · <a href="${APP_PATH}">Open Tern</a> · <a href="/logout">Sign out</a></span>`
    : html`<span class="who"><a href="/login">Sign in</a> · <a href="/register">Create an account</a></span>`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${html`${title === 'Tern' ? title : `${title} · Tern`}`}</title>
<link rel="stylesheet" href="/pages/site.css">
${html`${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}`}
</head>
<body>
<header class="top"><a class="brand" href="/">Tern</a>${who}</header>
<main id="main">
${html`<h1>${title}</h1>`}
${body}
</main>
</body>
</html>
`
}

/** What a page's forms need: the CSRF token of this response (@fastify/csrf-protection, in web/pages.ts's scope). */
export const formToken = (reply: FastifyReply) => html`<input type="hidden" name="_csrf" value="${reply.generateCsrf()}">`

export function sendPage(reply: FastifyReply, text: string, status = 200) {
  return reply.code(status).type('text/html; charset=utf-8').send(text)
}

/** The stylesheet of the pages (and of the older ones in web/layout.ts). Kept as text: the build copies only .ts output. */
export const SITE_CSS = `
:root { --fg: #1d2733; --muted: #5b6673; --line: #d5dde6; --bg: #f6f8fa; --accent: #1f6fc5; --danger: #b42318; --ok: #1a7f37; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: #fff; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .75rem 1rem; background: var(--bg); border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; color: var(--fg); text-decoration: none; }
.who { margin-left: auto; color: var(--muted); font-size: .95rem; }
main { max-width: 52rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 1.25rem 0 .5rem; }
.muted { color: var(--muted); }
.notice { padding: .6rem .8rem; border-left: 4px solid var(--ok); background: #eef8f0; }
.error { padding: .6rem .8rem; border-left: 4px solid var(--danger); background: #fdf0ef; }
.columns { display: grid; gap: 2rem; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); align-items: start; }
form.stack { display: grid; gap: .75rem; max-width: 26rem; }
label { display: grid; gap: .2rem; font-weight: 500; }
input, button { font: inherit; }
input[type="text"], input[type="password"], input[type="email"] { padding: .5rem .6rem; border: 1px solid #8a96a3; border-radius: 5px; width: 100%; color: inherit; background: #fff; }
button, .button { display: inline-block; padding: .5rem 1rem; border: 1px solid var(--accent); border-radius: 5px; background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; }
.qr figure { margin: 0; max-width: 14rem; }
.qr img, .qr svg { width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 1rem; max-width: 30rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); }
code { background: #f2f5f8; padding: .1rem .3rem; border-radius: 4px; }
`

/**
 * The login page's QR sign-in (beside the form): asks for a code (POST /api/auth/qr/generate),
 * shows it, waits for a signed-in device to scan and approve it (long-polled qr/status, with the
 * secret only this page holds), then asks the person whether to sign in as the account that
 * approved it — a stranger who scanned the code from a screen share must not sign this browser
 * into their account — and signs in (POST /api/auth/qr/login, which sets the session cookie) or
 * declines (qr/decline: the code is free again for its owner to scan). A code that expires is
 * replaced by a new one.
 */
export const LOGIN_JS = `
(function () {
  'use strict';
  var box = document.getElementById('qr-login');
  if (!box || !window.fetch) return;
  var figure = box.querySelector('figure');
  var state = box.querySelector('.qr-state');
  var choice = box.querySelector('.qr-choice');
  var next = box.getAttribute('data-next') || '/app';
  function post(path, body) {
    return fetch('/api/auth/qr/' + path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (res) { return res.json().then(function (json) { if (!res.ok || !json.success) throw new Error((json.error && json.error.message) || 'error'); return json.data; }); });
  }
  function say(text) { state.textContent = text; }
  function who(account) { return account ? '@' + account.username + (account.display_name ? ' (' + account.display_name + ')' : '') : 'another account'; }
  function start() {
    choice.hidden = true;
    post('generate', { device: 'Web browser' }).then(function (code) {
      var img = document.createElement('img');
      img.alt = 'QR code to scan with a signed-in Tern app';
      img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(code.qr_svg);
      figure.replaceChildren(img);
      say('Scan this code with Tern on a device where you are signed in (Devices → Link a device).');
      wait(code.token, code.secret, 'pending');
    }).catch(function () { say('The QR sign-in is not available right now.'); });
  }
  function ask(token, secret, account) {
    say('Approved by ' + who(account) + '. Sign in to this account on this browser?');
    var yes = choice.querySelector('[data-qr="login"]');
    var no = choice.querySelector('[data-qr="decline"]');
    yes.textContent = 'Sign in as @' + (account ? account.username : '…');
    choice.hidden = false;
    yes.onclick = function () {
      choice.hidden = true;
      say('Signing in…');
      post('login', { token: token, secret: secret }).then(function () { window.location.assign(next); }).catch(function () { start(); });
    };
    no.onclick = function () {
      choice.hidden = true;
      post('decline', { token: token, secret: secret }).then(function () { wait(token, secret, 'pending'); say('Declined. Scan the code with your own signed-in device.'); }).catch(function () { start(); });
    };
  }
  function wait(token, secret, since) {
    post('status', { token: token, secret: secret, wait: 25, since: since }).then(function (s) {
      if (s.status === 'authorized') return ask(token, secret, s.account);
      if (s.status === 'scanned') say('Scanned by ' + who(s.account) + ': approve the sign-in on that device.');
      if (s.status === 'expired' || s.status === 'used') return start();
      wait(token, secret, s.status);
    }).catch(function () { setTimeout(start, 3000); });
  }
  start();
})();
`
