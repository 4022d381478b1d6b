/**
 * Broadcast: a message from the platform to every active user. Posting the form only queues it
 * (the job runner writes the messages in batches); its page then shows sent / total, updated by
 * admin.js from the small JSON answer at /admin/broadcasts/{id}/progress.
 */
import type { FastifyPluginAsync } from 'fastify'
import { Type, type Static } from 'typebox'
import type { AppContext } from '../../context.js'
import { AppError } from '../../http/errors.js'
import { IdParams } from '../../http/schemas.js'
import * as broadcasts from '../../modules/broadcasts/index.js'
import { adminPage, csrfField, PANEL, sendPage, table, viewOf, when, type View } from './layout.js'
import { html } from './markup.js'

const MAX_CONTENT = 4096

const BroadcastForm = Type.Object({ content: Type.String({ maxLength: MAX_CONTENT }) }, { additionalProperties: false })

function composePage(view: View, recent: broadcasts.BroadcastView[], content = '', error?: string) {
  const rows = recent.map(
    (b) => html`<tr><td><a href="${PANEL}/broadcasts/${b.broadcast_id}">#${b.broadcast_id}</a></td><td>${when(b.created_at)}</td>
<td>${b.status}</td><td>${b.sent} / ${b.total}</td><td class="wrap">${b.content.length > 80 ? `${b.content.slice(0, 80)}…` : b.content}</td></tr>`,
  )
  return adminPage(
    view,
    'Broadcast',
    html`<p>A message from the system account <strong>tern</strong> into every active user's chat with it. It goes out in batches; the next page shows the progress.</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="${PANEL}/broadcast" class="stack" data-confirm="Send this message to every active user?">
${csrfField(view)}
<label for="content">Message<textarea id="content" name="content" required maxlength="${MAX_CONTENT}" rows="6">${content}</textarea></label>
<div><button type="submit">Send to everyone</button></div>
</form>
<h2>Recent broadcasts</h2>
${table('Recent broadcasts', ['id', 'created', 'status', 'sent', 'message'], rows, 'None yet.')}`,
    '/broadcast',
  )
}

const progressOf = (b: broadcasts.BroadcastView) => ({
  broadcast_id: b.broadcast_id,
  status: b.status,
  sent: b.sent,
  total: b.total,
  started_at: b.started_at,
  finished_at: b.finished_at,
})

export const broadcastPages: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get('/broadcast', { schema: { hide: true } }, async (request, reply) => {
    const { items } = await broadcasts.list(ctx, request.user, 1, 10)
    return sendPage(reply, composePage(viewOf(request, reply), items))
  })

  app.post<{ Body: Static<typeof BroadcastForm> }>(
    '/broadcast',
    { schema: { hide: true, body: BroadcastForm } },
    async (request, reply) => {
      let started: { broadcast_id: number }
      try {
        started = await broadcasts.start(ctx, request.user, request.body.content)
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 400) {
          const { items } = await broadcasts.list(ctx, request.user, 1, 10)
          return sendPage(
            reply,
            composePage(viewOf(request, reply), items, request.body.content, 'Write the message first: it is empty.'),
            400,
          )
        }
        throw error
      }
      return reply.redirect(`${PANEL}/broadcasts/${started.broadcast_id}`, 303)
    },
  )

  app.get<{ Params: Static<typeof IdParams> }>('/broadcasts/:id', { schema: { hide: true, params: IdParams } }, async (request, reply) => {
    const b = await broadcasts.get(ctx, request.user, request.params.id)
    const progressUrl = `${PANEL}/broadcasts/${b.broadcast_id}/progress`
    const body = html`<section class="progress" data-progress-url="${progressUrl}" data-status="${b.status}" aria-labelledby="progress-title">
<h2 id="progress-title">Progress</h2>
<progress id="progress-bar" max="${Math.max(b.total, 1)}" value="${b.sent}" aria-labelledby="progress-title"></progress>
<p aria-live="polite"><span data-field="sent">${b.sent}</span> of <span data-field="total">${b.total}</span> sent · <span data-field="status">${b.status}</span></p>
<p class="muted">This page follows the delivery by itself. <a href="${PANEL}/broadcasts/${b.broadcast_id}">Reload</a></p>
</section>
<h2>Message</h2>
<blockquote class="message">${b.content}</blockquote>
<dl class="facts"><dt>queued</dt><dd>${when(b.created_at)}</dd><dt>started</dt><dd data-field="started">${when(b.started_at)}</dd><dt>finished</dt><dd data-field="finished">${when(b.finished_at)}</dd></dl>
<p><a href="${PANEL}/broadcast">New broadcast</a></p>`
    return sendPage(reply, adminPage(viewOf(request, reply), `Broadcast #${b.broadcast_id}`, body, '/broadcast'))
  })

  app.get<{ Params: Static<typeof IdParams> }>('/broadcasts/:id/progress', { schema: { hide: true, params: IdParams } }, async (request) =>
    progressOf(await broadcasts.get(ctx, request.user, request.params.id)),
  )
}
