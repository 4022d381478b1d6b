/** The overview, the statistics with their charts, and the read-only server status. */
import type { FastifyPluginAsync } from 'fastify'
import type { AppContext } from '../../context.js'
import { formatSize } from '../../modules/messages/index.js'
import * as moderation from '../../modules/reports/index.js'
import * as stats from '../../modules/stats/index.js'
import { lineChart, type DayCount } from './chart.js'
import { adminPage, PANEL, sendPage, table, viewOf, when } from './layout.js'
import { html, trusted, type Markup } from './markup.js'

const number = (n: number) => n.toLocaleString('en-US')

/** 93784 → "1 d 2 h 3 min" */
export function duration(seconds: number): string {
  const d = Math.floor(seconds / 86_400)
  const h = Math.floor((seconds % 86_400) / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const parts = [d ? `${d} d` : '', h ? `${h} h` : '', `${m} min`].filter(Boolean)
  return seconds < 60 ? `${seconds} s` : parts.join(' ')
}

/** A chart with its caption and, for whoever wants the figures, the numbers in a table. */
function chartFigure(id: string, caption: string, unit: string, points: DayCount[]): Markup {
  return html`<figure aria-labelledby="${id}-caption">
<figcaption id="${id}-caption">${caption}</figcaption>
${trusted(lineChart(points, { id, title: caption, unit }))}
<details><summary>The numbers</summary>
${table(
  caption,
  ['day', unit],
  points.map((p) => html`<tr><td>${p.day}</td><td>${number(p.count)}</td></tr>`),
)}
</details>
</figure>`
}

const health = (check: { status: string; latency_ms: number | null; error: string | null }) =>
  html`<strong class="${check.status === 'error' ? 'bad' : 'good'}">${check.status}</strong>${check.latency_ms === null ? '' : ` (${check.latency_ms} ms)`}${check.error ? `: ${check.error}` : ''}`

export const insightPages: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    // counters, not a count over users (stats/service.ts)
    const [counts, pending] = await Promise.all([stats.publicStats(ctx), moderation.queue(ctx, request.user, 'pending', 1, 1)])
    const body = html`<ul class="cards">
<li><span class="value">${number(counts.users)}</span> users</li>
<li><span class="value">${number(counts.messages)}</span> messages</li>
<li><span class="value">${number(pending.total)}</span> <a href="${PANEL}/reports">pending ${pending.total === 1 ? 'report' : 'reports'}</a></li>
</ul>
<ul>
<li><a href="${PANEL}/users">Users</a>: search, ban and unban, the admin role</li>
<li><a href="${PANEL}/reports">Reports</a>: the queue; resolve, dismiss, ban, delete or warn</li>
<li><a href="${PANEL}/broadcast">Broadcast</a>: a message from the platform to every active user</li>
<li><a href="${PANEL}/modlog">ModLog</a>: every admin action</li>
<li><a href="${PANEL}/promos">Promo codes</a></li>
<li><a href="${PANEL}/stats">Stats</a>: messages and active users per day</li>
<li><a href="${PANEL}/status">Server status</a>: version, uptime, database, Redis, jobs, queues</li>
</ul>`
    return sendPage(reply, adminPage(viewOf(request, reply), 'Overview', body, ''))
  })

  app.get('/stats', { schema: { hide: true } }, async (request, reply) => {
    const figures = await stats.adminStats(ctx, request.user)
    const body = html`<ul class="cards">
<li><span class="value">${number(figures.users)}</span> users</li>
<li><span class="value">${number(figures.premium_users)}</span> premium users</li>
<li><span class="value">${number(figures.messages)}</span> messages</li>
<li><span class="value">${number(figures.channels)}</span> channels</li>
<li><span class="value">${formatSize(figures.files_bytes)}</span> in stored files</li>
</ul>
${chartFigure('messages-chart', `Messages per day, last ${figures.messages_per_day.length} days`, 'messages', figures.messages_per_day)}
${chartFigure('active-chart', `Active users per day, last ${figures.active_users_per_day.length} days`, 'active users', figures.active_users_per_day)}
<p class="muted">Days are UTC; today counts so far.</p>`
    return sendPage(reply, adminPage(viewOf(request, reply), 'Stats', body, '/stats'))
  })

  app.get('/status', { schema: { hide: true } }, async (request, reply) => {
    const s = await stats.serverStatus(ctx, request.user)
    const jobs = s.jobs.map(
      (
        j,
      ) => html`<tr><td>${j.name}</td><td>${j.scope}</td><td>${duration(Math.round(j.every_ms / 1000))}</td><td>${j.runs}</td><td>${j.failures}</td>
<td>${when(j.last_started_at)}</td><td>${j.last_duration_ms === null ? '—' : `${j.last_duration_ms} ms`}</td><td class="wrap">${j.last_error ?? ''}</td><td>${j.lease_holder ?? j.instance ?? ''}</td></tr>`,
    )
    const body = html`<p class="muted">Read-only. Nothing here runs or changes anything.</p>
<dl class="facts">
<dt>version</dt><dd>${s.version}</dd>
<dt>Node.js</dt><dd>${s.node}</dd>
<dt>up since</dt><dd>${when(s.started_at)} (${duration(s.uptime_seconds)})</dd>
<dt>memory (RSS)</dt><dd>${s.memory_mb} MiB</dd>
<dt>database</dt><dd>${s.dialect}: ${health(s.database)}</dd>
<dt>Redis</dt><dd>${health(s.redis)}</dd>
</dl>
<h2>Queues</h2>
<ul class="cards">
<li><span class="value">${number(s.queues.pending_reports)}</span> <a href="${PANEL}/reports">pending reports</a></li>
<li><span class="value">${number(s.queues.unfinished_broadcasts)}</span> unfinished broadcasts</li>
<li><span class="value">${number(s.queues.scheduled_messages)}</span> scheduled messages</li>
</ul>
<h2>Jobs</h2>
${table('Jobs', ['job', 'scope', 'every', 'runs', 'failures', 'last start', 'took', 'last error', 'instance'], jobs, 'No job has run yet.')}`
    return sendPage(reply, adminPage(viewOf(request, reply), 'Server status', body, '/status'))
  })
}
