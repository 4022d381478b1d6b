/** Promo codes: the list, a new code, deactivation (the premium service's admin functions, ModLog rows there). */
import type { FastifyPluginAsync } from 'fastify'
import { Type, type Static } from 'typebox'
import type { AppContext } from '../../context.js'
import { AppError, validationError } from '../../http/errors.js'
import { IdParams, PageNumber } from '../../http/schemas.js'
import * as premium from '../../modules/premium/index.js'
import { actionForm, adminPage, csrfField, notice, pager, PANEL, sendPage, table, viewOf, when, type View } from './layout.js'
import { html } from './markup.js'

const PER_PAGE = 25

const PromosQuery = Type.Object(
  { page: PageNumber, notice: Type.Optional(Type.String({ maxLength: 32 })) },
  { additionalProperties: false },
)
// form fields arrive as text; ranges are checked in the handler so the form can say what was wrong
const PromoForm = Type.Object(
  {
    code: Type.String({ maxLength: 64 }),
    discount_percent: Type.String({ maxLength: 8 }),
    max_uses: Type.String({ maxLength: 12 }),
    expires_on: Type.Optional(Type.String({ maxLength: 10 })),
  },
  { additionalProperties: false },
)
type PromoForm = Static<typeof PromoForm>

const NOTICES = { created: 'The promo code is created.', deactivated: 'The promo code is deactivated.' }

/** The form's fields as the service takes them, or a 400 naming the field. */
function parsePromo(form: PromoForm, now: number): premium.NewPromo {
  const code = form.code.trim()
  if (!/^[A-Za-z0-9_-]{3,32}$/.test(code)) throw validationError('The code must be 3 to 32 letters, digits, _ or -.')
  const discount = /^[0-9]{1,3}$/.test(form.discount_percent.trim()) ? Number(form.discount_percent) : NaN
  if (!(discount >= 1 && discount <= 100)) throw validationError('The discount must be a whole number of percent from 1 to 100.')
  const maxUses = /^[0-9]{1,8}$/.test(form.max_uses.trim()) ? Number(form.max_uses) : NaN
  if (!(maxUses >= 1 && maxUses <= 10_000_000)) throw validationError('The number of uses must be from 1 to 10,000,000.')
  let expiresAt: number | null = null
  const day = form.expires_on?.trim()
  if (day) {
    // valid through the end of that UTC day
    expiresAt = /^\d{4}-\d{2}-\d{2}$/.test(day) ? Date.parse(`${day}T23:59:59.999Z`) : NaN
    if (Number.isNaN(expiresAt)) throw validationError('The expiry must be a date (YYYY-MM-DD).')
    if (expiresAt <= now) throw validationError('The expiry must be in the future.')
  }
  return { code, discount_percent: discount, max_uses: maxUses, expires_at: expiresAt }
}

function createForm(view: View, form: Partial<PromoForm> = {}, error?: string) {
  return html`<h2>New promo code</h2>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="${PANEL}/promos" class="stack">
${csrfField(view)}
<label for="code">Code<input id="code" name="code" type="text" required pattern="[A-Za-z0-9_\\-]{3,32}" maxlength="32" value="${form.code ?? ''}" aria-describedby="code-hint"></label>
<span id="code-hint" class="muted">3 to 32 letters, digits, _ or -</span>
<label for="discount_percent">Discount, percent<input id="discount_percent" name="discount_percent" type="number" min="1" max="100" required value="${form.discount_percent ?? ''}"></label>
<label for="max_uses">How many times it can be used<input id="max_uses" name="max_uses" type="number" min="1" max="10000000" required value="${form.max_uses ?? ''}"></label>
<label for="expires_on">Valid through (optional, UTC)<input id="expires_on" name="expires_on" type="date" value="${form.expires_on ?? ''}"></label>
<div><button type="submit">Create</button></div>
</form>`
}

export const promoPages: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  async function render(
    request: Parameters<typeof viewOf>[0],
    reply: Parameters<typeof viewOf>[1],
    page: number,
    extra: { form?: Partial<PromoForm>; error?: string; notice?: string } = {},
    status = 200,
  ) {
    const view = viewOf(request, reply)
    const { items, total } = await premium.listPromos(ctx, request.user, page, PER_PAGE)
    const rows = items.map(
      (p) => html`<tr><td><code>${p.code}</code></td><td>${p.discount_percent}%</td><td>${p.used_count} / ${p.max_uses}</td>
<td>${p.expires_at ? when(p.expires_at) : 'never'}</td><td>${p.is_active ? 'active' : 'inactive'}</td><td>${when(p.created_at)}</td>
<td class="actions">${p.is_active ? actionForm(view, `${PANEL}/promos/${p.id}/deactivate`, 'Deactivate', { confirm: `Deactivate ${p.code}? Redemptions made stand.`, danger: true }) : ''}</td></tr>`,
    )
    const body = html`${notice(extra.notice, NOTICES)}
${table('Promo codes', ['code', 'discount', 'used', 'expires', 'state', 'created', ''], rows, 'No promo codes yet.')}
${pager(`${PANEL}/promos`, {}, page, Math.ceil(total / PER_PAGE))}
${createForm(view, extra.form, extra.error)}`
    return sendPage(reply, adminPage(view, 'Promo codes', body, '/promos'), status)
  }

  app.get<{ Querystring: Static<typeof PromosQuery> }>(
    '/promos',
    { schema: { hide: true, querystring: PromosQuery } },
    async (request, reply) => render(request, reply, request.query.page, { notice: request.query.notice }),
  )

  app.post<{ Body: PromoForm }>('/promos', { schema: { hide: true, body: PromoForm } }, async (request, reply) => {
    try {
      await premium.createPromo(ctx, request.user, parsePromo(request.body, ctx.clock.now()))
    } catch (error) {
      // a bad field or a taken code: the form again, filled in, with the reason
      if (error instanceof AppError && (error.statusCode === 400 || error.statusCode === 409)) {
        return render(request, reply, 1, { form: request.body, error: error.message }, error.statusCode)
      }
      throw error
    }
    return reply.redirect(`${PANEL}/promos?notice=created`, 303)
  })

  app.post<{ Params: Static<typeof IdParams> }>(
    '/promos/:id/deactivate',
    { schema: { hide: true, params: IdParams } },
    async (request, reply) => {
      await premium.deactivatePromo(ctx, request.user, request.params.id)
      return reply.redirect(`${PANEL}/promos?notice=deactivated`, 303)
    },
  )
}
