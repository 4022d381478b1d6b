/** The reports queue: what was reported and by whom; resolve or dismiss with a note, or act (ban, delete, warn). */
import type { FastifyPluginAsync } from 'fastify'
import { Type, type Static } from 'typebox'
import type { AppContext } from '../../context.js'
import { IdParams, PageNumber } from '../../http/schemas.js'
import * as moderation from '../../modules/reports/index.js'
import { adminPage, csrfField, notice, pager, PANEL, sendPage, stateBadge, userLink, viewOf, when, type View } from './layout.js'
import { html, type Markup } from './markup.js'

const PER_PAGE = 20

const ReportsQuery = Type.Object(
  {
    status: Type.Union([Type.Literal('pending'), Type.Literal('resolved'), Type.Literal('dismissed'), Type.Literal('all')], {
      default: 'pending',
    }),
    page: PageNumber,
    notice: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { additionalProperties: false },
)
type ReportsQuery = Static<typeof ReportsQuery>

const ResolveForm = Type.Object(
  {
    status: Type.Union([Type.Literal('resolved'), Type.Literal('dismissed')], { errorMessage: 'status must be resolved or dismissed' }),
    note: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
)
const ActionForm = Type.Object(
  {
    action: Type.Union([Type.Literal('ban_user'), Type.Literal('delete_message'), Type.Literal('warn_user')], {
      errorMessage: 'action must be ban_user, delete_message or warn_user',
    }),
    note: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
)

const NOTICES = {
  resolved: 'The report is resolved.',
  dismissed: 'The report is dismissed.',
  ban_user: 'The reported user is banned and the report resolved.',
  delete_message: 'The message is deleted for everyone and the report resolved.',
  warn_user: 'The user was warned and the report resolved.',
}

const ACTION_LABELS: Record<moderation.ReportAction, string> = {
  ban_user: 'Ban the reported user',
  delete_message: 'Delete the message for everyone',
  warn_user: 'Warn the reported user',
}

type Report = Awaited<ReturnType<typeof moderation.queue>>['items'][number]

function closeForms(view: View, r: Report): Markup {
  const actions = (Object.keys(ACTION_LABELS) as moderation.ReportAction[]).filter((a) =>
    a === 'delete_message' ? r.message !== null && !r.message.deleted_for_all : r.reported_user?.is_active,
  )
  const base = `${PANEL}/reports/${r.report_id}`
  return html`<form method="post" action="${base}/resolve">
${csrfField(view)}
<label for="note-${r.report_id}">Note (optional)<textarea id="note-${r.report_id}" name="note" maxlength="1000" rows="2"></textarea></label>
<div class="row"><button type="submit" name="status" value="resolved">Resolve</button> <button type="submit" name="status" value="dismissed" class="secondary">Dismiss</button></div>
</form>
${
  actions.length
    ? html`<form method="post" action="${base}/action" data-confirm="Apply this action? It cannot be undone from here.">
${csrfField(view)}
<div class="row">
<label for="action-${r.report_id}">Action<select id="action-${r.report_id}" name="action">${actions.map((a) => html`<option value="${a}">${ACTION_LABELS[a]}</option>`)}</select></label>
<label for="action-note-${r.report_id}">Note (optional)<input id="action-note-${r.report_id}" name="note" type="text" maxlength="1000"></label>
<button type="submit" class="danger">Apply</button>
</div>
</form>`
    : ''
}`
}

function reportCard(view: View, r: Report): Markup {
  const message = r.message
    ? html`<p>Reported message #${r.message.message_id}${r.message.chat_id === null ? '' : html` in chat #${r.message.chat_id}`}, sent ${when(r.message.created_at)}:</p>
${r.message.deleted_for_all ? html`<p class="muted">(deleted for everyone)</p>` : html`<blockquote>${r.message.content ?? ''}</blockquote>`}`
    : ''
  return html`<article class="report" aria-labelledby="report-${r.report_id}">
<h2 id="report-${r.report_id}">Report #${r.report_id} · ${r.status}</h2>
<p><strong>Reason:</strong> ${r.reason}</p>
<p>Reported by ${userLink(r.reporter.user_id, r.reporter.username)} on ${when(r.created_at)}${
    r.reported_user
      ? html`; about ${userLink(r.reported_user.user_id, r.reported_user.username)} ${stateBadge(r.reported_user.is_active)}`
      : ''
  }</p>
${message}
${
  r.status === 'pending'
    ? closeForms(view, r)
    : html`<p class="muted">Closed ${when(r.resolved_at)}${r.resolved_by === null ? '' : html` by ${userLink(r.resolved_by, null)}`}${r.note ? html`: ${r.note}` : ''}</p>`
}
</article>`
}

export const reportPages: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get<{ Querystring: ReportsQuery }>('/reports', { schema: { hide: true, querystring: ReportsQuery } }, async (request, reply) => {
    const { status, page } = request.query
    const view = viewOf(request, reply)
    const { items, total } = await moderation.queue(ctx, request.user, status === 'all' ? undefined : status, page, PER_PAGE)
    const tab = (value: ReportsQuery['status'], label: string) =>
      html`<li><a href="${PANEL}/reports?status=${value}"${value === status ? html` aria-current="true"` : ''}>${label}</a></li>`
    const body = html`${notice(request.query.notice, NOTICES)}
<nav aria-label="Report status"><ul class="tabs">${tab('pending', 'Pending')}${tab('resolved', 'Resolved')}${tab('dismissed', 'Dismissed')}${tab('all', 'All')}</ul></nav>
<p class="muted" role="status">${total} ${status === 'all' ? '' : status} ${total === 1 ? 'report' : 'reports'}.</p>
${items.map((r) => reportCard(view, r))}
${pager(`${PANEL}/reports`, { status }, page, Math.ceil(total / PER_PAGE))}`
    return sendPage(reply, adminPage(view, 'Reports', body, '/reports'))
  })

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof ResolveForm> }>(
    '/reports/:id/resolve',
    { schema: { hide: true, params: IdParams, body: ResolveForm } },
    async (request, reply) => {
      await moderation.close(ctx, request.user, request.params.id, request.body.status, request.body.note)
      return reply.redirect(`${PANEL}/reports?notice=${request.body.status}`, 303)
    },
  )

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof ActionForm> }>(
    '/reports/:id/action',
    { schema: { hide: true, params: IdParams, body: ActionForm } },
    async (request, reply) => {
      await moderation.act(ctx, request.user, request.params.id, request.body.action, request.body.note)
      return reply.redirect(`${PANEL}/reports?notice=${request.body.action}`, 303)
    },
  )
}
