/** The admin panel's page shell and the small pieces every page repeats (forms, pagination, tables). */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { UserRow } from '../../db/tables.js'
import { html, type Markup } from './markup.js'
import { isPlatformAdmin } from '../../policies/accounts.js'

export const PANEL = '/admin'

/** Who is looking and the form token for this response; every page gets one. */
export interface View {
  admin: UserRow | null
  csrf: string
}

/** The page's view: the admin signed in (once the guard has run) and a CSRF token for its forms. */
export function viewOf(request: FastifyRequest, reply: FastifyReply): View {
  const admin = request.user && isPlatformAdmin(request.user) ? request.user : null
  return { admin, csrf: reply.generateCsrf() }
}

export function sendPage(reply: FastifyReply, page: string, status = 200) {
  return reply.code(status).type('text/html; charset=utf-8').send(page)
}

const NAV: [path: string, label: string][] = [
  ['', 'Overview'],
  ['/users', 'Users'],
  ['/reports', 'Reports'],
  ['/broadcast', 'Broadcast'],
  ['/modlog', 'ModLog'],
  ['/promos', 'Promo codes'],
  ['/stats', 'Stats'],
  ['/status', 'Server status'],
]

/** A whole page. `section` is the NAV path this page belongs to (marked aria-current). */
export function adminPage(view: View, title: string, body: Markup, section?: string): string {
  const nav = view.admin
    ? html`<nav class="nav" aria-label="Admin sections"><ul>${NAV.map(
        ([path, label]) => html`<li><a href="${PANEL + path}"${path === section ? html` aria-current="page"` : ''}>${label}</a></li>`,
      )}</ul></nav>
<div class="who">Signed in as <strong>${view.admin.username}</strong>
<form method="post" action="${PANEL}/logout" class="inline">${csrfField(view)}<button type="submit" class="link">Sign out</button></form></div>`
    : ''
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${html`${title} · Tern admin`}</title>
<link rel="stylesheet" href="${PANEL}/assets/admin.css">
<script src="${PANEL}/assets/admin.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="${PANEL}">Tern admin</a>${nav}</header>
<main id="main" tabindex="-1">
${html`<h1>${title}</h1>`}
${body}
</main>
</body>
</html>
`
}

export const csrfField = (view: View) => html`<input type="hidden" name="_csrf" value="${view.csrf}">`

/** A one-button form (ban, unban, deactivate…); `confirm` asks first (admin.js). */
export function actionForm(
  view: View,
  action: string,
  label: string,
  options: { confirm?: string; fields?: Markup; danger?: boolean } = {},
) {
  return html`<form method="post" action="${action}" class="inline"${options.confirm ? html` data-confirm="${options.confirm}"` : ''}>${csrfField(view)}${options.fields ?? ''}<button type="submit"${options.danger ? html` class="danger"` : ''}>${label}</button></form>`
}

/** Previous / next links that keep the page's other query parameters. */
export function pager(path: string, query: Record<string, string | number | undefined>, page: number, pages: number): Markup {
  if (pages <= 1) return html``
  const link = (to: number) => {
    const params = new URLSearchParams()
    for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value))
    params.set('page', String(to))
    return `${path}?${params}`
  }
  return html`<nav class="pager" aria-label="Pages">
${page > 1 ? html`<a href="${link(page - 1)}" rel="prev">← Previous</a>` : ''}
<span>Page ${page} of ${pages}</span>
${page < pages ? html`<a href="${link(page + 1)}" rel="next">Next →</a>` : ''}
</nav>`
}

/** A table that scrolls sideways on a narrow screen instead of overflowing the page. */
export function table(caption: string, headers: string[], rows: Markup[], empty = 'Nothing here.'): Markup {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0"><table>
<caption class="visually-hidden">${caption}</caption>
<thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>
${rows.map((r) => html`${r}\n`)}</tbody></table></div>`
}

/** A notice after a redirect (`?notice=`); only the texts named here are ever shown. */
export function notice(code: string | undefined, texts: Record<string, string>): Markup {
  const text = code ? texts[code] : undefined
  return text ? html`<p class="notice" role="status">${text}</p>` : html``
}

/** A short date-time for tables: the ISO string's date and minutes, in UTC. */
export const when = (isoText: string | null | undefined) => (isoText ? `${isoText.slice(0, 10)} ${isoText.slice(11, 16)}` : '—')

export const userLink = (id: number | null, username: string | null) =>
  id === null ? html`—` : html`<a href="${PANEL}/users/${id}">${username ?? `#${id}`}</a>`

export const stateBadge = (active: boolean) =>
  active ? html`<span class="badge">active</span>` : html`<span class="badge banned">banned</span>`
