/**
 * Invite links as pages: `/join/<code>` (a group's) and `/channel/<code>` (a channel's) show what
 * the link leads to (title, member count, description) and a Join button. The button is a form
 * post with the pages' CSRF token that joins with the cookie session (the same services as
 * POST V2/groups/invite-link/join and V2/channels/subscribe) and opens the chat in the app;
 * signed out, it leads to the login page, which comes back here.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Type, type Static } from 'typebox'
import type { AppContext } from '../context.js'
import type { InviteLinkRow } from '../db/tables.js'
import { AppError } from '../http/errors.js'
import * as channels from '../modules/channels/index.js'
import * as communities from '../modules/communities/index.js'
import * as groups from '../modules/groups/index.js'
import { html, type Markup } from './admin/markup.js'
import { APP_PATH, cookieUser, formToken, loginTo, sendPage, sitePage } from './site.js'

const CodeParams = Type.Object({ code: Type.String({ minLength: 1, maxLength: 128 }) })
type CodeParams = Static<typeof CodeParams>

type Kind = 'join' | 'channel'

/** Why an invite no longer works, or null while it does. */
function refusal(invite: InviteLinkRow, now: number): string | null {
  if (invite.revoked_at !== null) return 'This invite link was revoked.'
  if (invite.expires_at !== null && invite.expires_at <= now) return 'This invite link has expired.'
  if (invite.usage_limit !== null && invite.uses >= invite.usage_limit) return 'This invite link has reached its usage limit.'
  return null
}

const chatPath = (chatId: number) => `${APP_PATH}/chat/${chatId}`

function notFoundPage(reply: FastifyReply) {
  return sendPage(
    reply,
    sitePage(
      'Invite link not found',
      html`<p class="error" role="alert">This invite link does not exist. Ask for a new one.</p>
<p><a href="/">To the start page</a></p>`,
    ),
    404,
  )
}

export const invitePages: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  /** The invite and its chat as `viewerId` sees it, when the code names a group (join) or channel. */
  const lookup = async (code: string, viewerId: number) => {
    const invite = await communities.inviteByCode(ctx, code)
    if (!invite) return null
    const chat = await communities.chatView(ctx, invite.chat_id, viewerId)
    if (!chat || (chat.chat_type !== 'group' && chat.chat_type !== 'channel')) return null
    return { invite, chat }
  }

  const preview = (kind: Kind) => async (request: FastifyRequest<{ Params: CodeParams }>, reply: FastifyReply) => {
    const { code } = request.params
    const me = await cookieUser(ctx, request)
    const found = await lookup(code, me?.user.id ?? 0)
    if (!found) return notFoundPage(reply)
    const { invite, chat } = found
    const channel = chat.chat_type === 'channel'
    const here = `/${kind}/${encodeURIComponent(code)}`
    const noun = channel ? 'channel' : 'group'
    const counted = channel ? (chat.member_count === 1 ? 'subscriber' : 'subscribers') : chat.member_count === 1 ? 'member' : 'members'
    const problem = refusal(invite, ctx.clock.now())
    let action: Markup
    if (me && chat.my_role !== null)
      action = html`<p>You are already in this ${noun}. <a class="button" href="${chatPath(chat.id)}">Open it</a></p>`
    else if (problem) action = html`<p class="error" role="alert">${problem}</p>`
    else if (me) {
      action = html`<form method="post" action="${here}">${formToken(reply)}<button type="submit">${channel ? 'Subscribe' : 'Join the group'}</button></form>`
    } else
      action = html`<p><a class="button" href="${loginTo(here)}">Sign in to ${channel ? 'subscribe' : 'join'}</a> or <a href="/register?next=${encodeURIComponent(here)}">create an account</a></p>`
    return sendPage(
      reply,
      sitePage(
        chat.title ?? (channel ? 'A channel' : 'A group'),
        html`<div class="card">
<p class="muted">${channel ? 'Channel' : 'Group'} · <span data-testid="member-count">${chat.member_count}</span> ${counted}</p>
${chat.description ? html`<p>${chat.description}</p>` : ''}
${action}
</div>`,
        { signedInAs: me?.user.username ?? null },
      ),
      problem && !(me && chat.my_role !== null) ? 410 : 200,
    )
  }

  const join = (kind: Kind) => async (request: FastifyRequest<{ Params: CodeParams }>, reply: FastifyReply) => {
    const { code } = request.params
    const here = `/${kind}/${encodeURIComponent(code)}`
    const me = await cookieUser(ctx, request)
    if (!me) return reply.redirect(loginTo(here), 303)
    const found = await lookup(code, me.user.id)
    if (!found) return notFoundPage(reply)
    const { chat } = found
    if (chat.my_role === null) {
      try {
        if (chat.chat_type === 'channel') await channels.subscribe(ctx, me.user, { code })
        else await groups.joinByInvite(ctx, me.user, code)
      } catch (error) {
        // joined meanwhile (another tab): open it all the same
        if (!(error instanceof AppError && error.statusCode === 409)) throw error
      }
    }
    return reply.redirect(chatPath(chat.id), 303)
  }

  for (const kind of ['join', 'channel'] as const) {
    const summary = kind === 'join' ? 'A group invite link: preview and Join button' : 'A channel invite link: preview and Subscribe button'
    app.get<{ Params: CodeParams }>(
      `/${kind}/:code`,
      { schema: { summary, tags: ['service'], hide: true, params: CodeParams } },
      preview(kind),
    )
    app.post<{ Params: CodeParams }>(`/${kind}/:code`, { schema: { hide: true, params: CodeParams } }, join(kind))
  }
}
