/** The ModLog: every admin action, newest first, filtered by admin, action and target. */
import type { FastifyPluginAsync } from 'fastify'
import { Type, type Static } from 'typebox'
import type { AppContext } from '../../context.js'
import { adminPage, pager, PANEL, sendPage, table, userLink, viewOf, when } from './layout.js'
import { html, type Markup } from './markup.js'
import * as modlog from '../../modules/modlog/index.js'
import { PageNumber } from '../../http/schemas.js'

const PER_PAGE = 50

/** The actions the services write, offered as suggestions (any other text still filters). */
const KNOWN_ACTIONS = [
  'user.ban',
  'user.unban',
  'user.grant_admin',
  'user.revoke_admin',
  'report.resolve',
  'report.dismiss',
  'report.ban_user',
  'report.delete_message',
  'report.warn_user',
  'broadcast.send',
  'premium.promo_create',
  'premium.promo_deactivate',
]

// an empty box in the filter form arrives as '' (not as a missing parameter)
const OptionalId = Type.Optional(Type.String({ pattern: '^[0-9]{0,15}$', errorMessage: 'must be a user id (digits)' }))
const ModLogQuery = Type.Object(
  {
    admin_id: OptionalId,
    action: Type.Optional(Type.String({ maxLength: 64 })),
    target_id: OptionalId,
    page: PageNumber,
  },
  { additionalProperties: false },
)
type ModLogQuery = Static<typeof ModLogQuery>

type Entry = Awaited<ReturnType<typeof modlog.listModLog>>['items'][number]

const details = (value: Entry['details']) => (value && Object.keys(value).length ? JSON.stringify(value) : '')

export function modLogTable(items: Entry[]): Markup {
  const rows = items.map(
    (e) => html`<tr><td>${when(e.created_at)}</td><td>${userLink(e.admin_id, e.admin_username)}</td><td><code>${e.action}</code></td>
<td>${e.target_id === null ? '—' : html`<a href="${PANEL}/users/${e.target_id}">#${e.target_id}</a>`}</td><td class="wrap"><code>${details(e.details)}</code></td></tr>`,
  )
  return table('Moderation log', ['when (UTC)', 'admin', 'action', 'target', 'details'], rows, 'No entries.')
}

const id = (text: string | undefined) => (text ? Number(text) : undefined)

export const modLogPages: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get<{ Querystring: ModLogQuery }>('/modlog', { schema: { hide: true, querystring: ModLogQuery } }, async (request, reply) => {
    const query = request.query
    const filter = { adminId: id(query.admin_id), action: query.action?.trim() || undefined, targetId: id(query.target_id) }
    const { items, total } = await modlog.listModLog(ctx, request.user, query.page, PER_PAGE, filter)
    const { page: _page, ...kept } = query
    const body = html`<form method="get" action="${PANEL}/modlog" class="filters" role="search">
<label for="admin_id">Admin (user id)<input id="admin_id" name="admin_id" type="text" inputmode="numeric" pattern="[0-9]*" value="${query.admin_id ?? ''}"></label>
<label for="action">Action<input id="action" name="action" type="text" list="actions" maxlength="64" value="${query.action ?? ''}"></label>
<datalist id="actions">${KNOWN_ACTIONS.map((a) => html`<option value="${a}">`)}</datalist>
<label for="target_id">Target (user id)<input id="target_id" name="target_id" type="text" inputmode="numeric" pattern="[0-9]*" value="${query.target_id ?? ''}"></label>
<button type="submit">Filter</button>
</form>
<p class="muted" role="status">${total} ${total === 1 ? 'entry' : 'entries'}.</p>
${modLogTable(items)}
${pager(`${PANEL}/modlog`, kept, query.page, Math.ceil(total / PER_PAGE))}`
    return sendPage(reply, adminPage(viewOf(request, reply), 'ModLog', body, '/modlog'))
  })
}
