/** Users: search and filters, one user's detail, and ban / unban / admin role (admin service, ModLog rows there). */
import type { FastifyPluginAsync } from 'fastify'
import { Type, type Static } from 'typebox'
import type { AppContext } from '../../context.js'
import { IdParams, PageNumber } from '../../http/schemas.js'
import * as admin from '../../modules/admin/index.js'
import type { AdminUserView } from '../../modules/users/index.js'
import {
  actionForm,
  adminPage,
  csrfField,
  notice,
  pager,
  PANEL,
  sendPage,
  stateBadge,
  table,
  userLink,
  viewOf,
  when,
  type View,
} from './layout.js'
import { html, type Markup } from './markup.js'
import { modLogTable } from './modlog.js'
import * as modlog from '../../modules/modlog/index.js'

const PER_PAGE = 25

const Choice = <T extends string>(...values: T[]) => Type.Optional(Type.Union([Type.Literal(''), ...values.map((v) => Type.Literal(v))]))

const UsersQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 254 })),
    state: Choice('active', 'banned'),
    role: Choice('admin', 'member'),
    premium: Choice('yes', 'no'),
    page: PageNumber,
    notice: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { additionalProperties: false },
)
type UsersQuery = Static<typeof UsersQuery>

const BanForm = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false })
const RoleForm = Type.Object({ is_admin: Type.Union([Type.Literal('1'), Type.Literal('0')]) }, { additionalProperties: false })
const NoticeQuery = Type.Object({ notice: Type.Optional(Type.String({ maxLength: 32 })) }, { additionalProperties: false })

const NOTICES = {
  banned: 'The user is banned: their sessions are ended and their open connections closed.',
  unbanned: 'The ban is lifted.',
  granted: 'The user is now a platform administrator.',
  revoked: 'The admin role is revoked.',
}

function filters(query: UsersQuery): Markup {
  const option = (value: string, label: string, current: string | undefined) =>
    html`<option value="${value}"${(current ?? '') === value ? html` selected` : ''}>${label}</option>`
  return html`<form method="get" action="${PANEL}/users" class="filters" role="search">
<label for="q">Search<input id="q" name="q" type="search" value="${query.q ?? ''}" placeholder="username or email" maxlength="254"></label>
<label for="state">State<select id="state" name="state">${option('', 'any', query.state)}${option('active', 'active', query.state)}${option('banned', 'banned', query.state)}</select></label>
<label for="role">Role<select id="role" name="role">${option('', 'any', query.role)}${option('admin', 'admin', query.role)}${option('member', 'member', query.role)}</select></label>
<label for="premium">Premium<select id="premium" name="premium">${option('', 'any', query.premium)}${option('yes', 'premium', query.premium)}${option('no', 'not premium', query.premium)}</select></label>
<button type="submit">Filter</button>
</form>`
}

function userRow(u: AdminUserView): Markup {
  return html`<tr><td>${u.user_id}</td><td>${userLink(u.user_id, u.username)}</td><td>${u.display_name}</td><td>${u.email ?? ''}</td>
<td>${stateBadge(u.is_active)}</td><td>${u.is_admin ? html`<span class="badge admin">admin</span>` : ''}</td><td>${u.is_premium ? 'premium' : ''}</td>
<td>${when(u.created_at)}</td><td>${when(u.last_activity)}</td></tr>`
}

function moderationForms(view: View, user: { user_id: number; username: string; is_active: boolean; is_admin: boolean }): Markup {
  const base = `${PANEL}/users/${user.user_id}`
  const self = view.admin?.id === user.user_id
  const ban = user.is_active
    ? html`<form method="post" action="${base}/ban" class="stack" data-confirm="${`Ban ${user.username}? Their sessions end and their connections close at once.`}">
${csrfField(view)}
<label for="reason">Reason for the ban<textarea id="reason" name="reason" maxlength="500" placeholder="shown in the ModLog"></textarea></label>
<div><button type="submit" class="danger"${self ? html` disabled` : ''}>Ban ${user.username}</button>${self ? html` <span class="muted">(you cannot ban yourself)</span>` : ''}</div>
</form>`
    : actionForm(view, `${base}/unban`, `Unban ${user.username}`, { confirm: `Lift the ban on ${user.username}?` })
  const role = user.is_admin
    ? actionForm(view, `${base}/role`, 'Revoke admin role', {
        confirm: `Revoke ${user.username}'s admin role?`,
        fields: html`<input type="hidden" name="is_admin" value="0">`,
        danger: true,
      })
    : actionForm(view, `${base}/role`, 'Make admin', {
        confirm: `Make ${user.username} a platform administrator?`,
        fields: html`<input type="hidden" name="is_admin" value="1">`,
      })
  return html`<h2>Moderation</h2>${ban}<h2>Role</h2><p>${role}</p>`
}

export const userPages: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get<{ Querystring: UsersQuery }>('/users', { schema: { hide: true, querystring: UsersQuery } }, async (request, reply) => {
    const query = request.query
    const view = viewOf(request, reply)
    const filter = {
      q: query.q?.trim() || undefined,
      isActive: query.state ? query.state === 'active' : undefined,
      isAdmin: query.role ? query.role === 'admin' : undefined,
      isPremium: query.premium ? query.premium === 'yes' : undefined,
    }
    const { items, total } = await admin.listUsers(ctx, request.user, filter, query.page, PER_PAGE)
    const pages = Math.ceil(total / PER_PAGE)
    const { page: _page, notice: _notice, ...kept } = query
    const body = html`${filters(query)}
<p class="muted" role="status">${total} ${total === 1 ? 'user' : 'users'} found.</p>
${table('Users', ['id', 'username', 'name', 'email', 'state', 'role', 'premium', 'created', 'last active'], items.map(userRow), 'No user matches.')}
${pager(`${PANEL}/users`, kept, query.page, pages)}`
    return sendPage(reply, adminPage(view, 'Users', body, '/users'))
  })

  app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof NoticeQuery> }>(
    '/users/:id',
    { schema: { hide: true, params: IdParams, querystring: NoticeQuery } },
    async (request, reply) => {
      const view = viewOf(request, reply)
      const user = await admin.userDetail(ctx, request.user, request.params.id)
      const log = await modlog.listModLog(ctx, request.user, 1, 10, { targetId: user.user_id })
      const body = html`${notice(request.query.notice, NOTICES)}
<dl class="facts">
<dt>id</dt><dd>${user.user_id}</dd>
<dt>username</dt><dd>${user.username}</dd>
<dt>display name</dt><dd>${user.display_name}</dd>
<dt>email</dt><dd>${user.email ?? '—'}</dd>
<dt>state</dt><dd>${stateBadge(user.is_active)}${user.is_system ? ' (the system account)' : ''}</dd>
<dt>role</dt><dd>${user.is_admin ? html`<span class="badge admin">admin</span>` : 'member'}</dd>
<dt>premium</dt><dd>${user.premium.is_premium ? `until ${when(user.premium.expires_at)}` : 'no'}</dd>
<dt>two-factor</dt><dd>${user.two_factor_enabled ? 'on' : 'off'}</dd>
<dt>active sessions</dt><dd>${user.sessions_count}</dd>
<dt>reports against</dt><dd>${user.reports.total} (${user.reports.pending} pending)</dd>
<dt>warnings</dt><dd>${user.warnings}</dd>
<dt>created</dt><dd>${when(user.created_at)}</dd>
<dt>last active</dt><dd>${when(user.last_activity)}</dd>
</dl>
${user.is_system ? html`<p class="muted">The system account is the platform itself; it cannot be moderated.</p>` : moderationForms(view, user)}
<h2>ModLog for this user</h2>
${modLogTable(log.items)}
${log.total > log.items.length ? html`<p><a href="${PANEL}/modlog?target_id=${user.user_id}">All ${log.total} entries</a></p>` : ''}`
      return sendPage(reply, adminPage(view, `User ${user.username}`, body, '/users'))
    },
  )

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof BanForm> }>(
    '/users/:id/ban',
    { schema: { hide: true, params: IdParams, body: BanForm } },
    async (request, reply) => {
      await admin.ban(ctx, request.user, request.params.id, request.body.reason)
      return reply.redirect(`${PANEL}/users/${request.params.id}?notice=banned`, 303)
    },
  )

  app.post<{ Params: Static<typeof IdParams> }>(
    '/users/:id/unban',
    { schema: { hide: true, params: IdParams } },
    async (request, reply) => {
      await admin.unban(ctx, request.user, request.params.id)
      return reply.redirect(`${PANEL}/users/${request.params.id}?notice=unbanned`, 303)
    },
  )

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof RoleForm> }>(
    '/users/:id/role',
    { schema: { hide: true, params: IdParams, body: RoleForm } },
    async (request, reply) => {
      const grant = request.body.is_admin === '1'
      await admin.setRole(ctx, request.user, request.params.id, grant)
      return reply.redirect(`${PANEL}/users/${request.params.id}?notice=${grant ? 'granted' : 'revoked'}`, 303)
    },
  )
}
