/** Groups (V2): the group-specific parts (forum topics) on top of the communities module. */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { notFound, validationError } from '../../http/errors.js'
import { iso } from '../../lib/time.js'
import { inTransaction } from '../../events/outbox.js'
import * as community from '../communities/index.js'
import { presentGroup } from './present.js'
import * as repo from './repo.js'
import type { CreateGroupBody } from './schemas.js'

const link = (ctx: AppContext) => (code: string) => community.inviteLink(ctx, 'group', code)

export async function create(ctx: AppContext, me: UserRow, input: CreateGroupBody) {
  return presentGroup(await community.create(ctx, me, 'group', input, false), link(ctx))
}

export async function info(ctx: AppContext, me: UserRow, chatId: number) {
  return presentGroup(await community.view(ctx, me, chatId, 'group'), link(ctx))
}

/** A page of members in join order, with roles: members of the group (anyone for a public one). */
export async function memberPage(ctx: AppContext, me: UserRow, chatId: number, page: number, perPage: number) {
  return community.memberPage(ctx, await community.view(ctx, me, chatId, 'group'), me.id, page, perPage)
}

export const addMember = (ctx: AppContext, me: UserRow, chatId: number, userId: number) =>
  community.addMember(ctx, me, chatId, userId, 'group')
export const removeMember = (ctx: AppContext, me: UserRow, chatId: number, userId: number) =>
  community.removeMember(ctx, me, chatId, userId, 'group')
export const promote = (ctx: AppContext, me: UserRow, chatId: number, userId: number) =>
  community.setAdmin(ctx, me, chatId, userId, 'group', true)
export const demote = (ctx: AppContext, me: UserRow, chatId: number, userId: number) =>
  community.setAdmin(ctx, me, chatId, userId, 'group', false)
export const leave = (ctx: AppContext, me: UserRow, chatId: number) => community.leave(ctx, me, chatId, 'group')

export async function transfer(ctx: AppContext, me: UserRow, chatId: number, userId: number) {
  return presentGroup(await community.transfer(ctx, me, chatId, userId, 'group'), link(ctx))
}

export async function edit(ctx: AppContext, me: UserRow, chatId: number, changes: Parameters<typeof community.edit>[4]) {
  return presentGroup(await community.edit(ctx, me, chatId, 'group', changes), link(ctx))
}

export const createInvite = (ctx: AppContext, me: UserRow, chatId: number, options: { expires_at?: string; usage_limit?: number }) =>
  community.createInvite(ctx, me, chatId, 'group', options)
export const revokeInvite = (ctx: AppContext, me: UserRow, chatId: number, code: string) =>
  community.revokeInvite(ctx, me, chatId, 'group', code)
export const listInvites = (ctx: AppContext, me: UserRow, chatId: number) => community.listInvites(ctx, me, chatId, 'group')

/** Resolves an invite code (or link) of a group and joins it. */
export async function joinByInvite(ctx: AppContext, me: UserRow, code: string) {
  const invite = await community.findInvite(ctx, code)
  const chat = await community.findView(ctx.db, invite.chat_id, me.id)
  if (chat?.chat_type !== 'group') throw notFound('Invite link not found')
  return presentGroup(await community.join(ctx, me, chat.id, invite, 'group'), link(ctx))
}

function presentTopic(row: { id: number; chat_id: number; title: string; icon_emoji_id: string | null; created_at: number }) {
  return { topic_id: row.id, chat_id: row.chat_id, title: row.title, icon_emoji_id: row.icon_emoji_id, created_at: iso(row.created_at) }
}

/** A forum topic (owner or admin, forum mode on); members send to it with messages/send `topic_id`. */
export async function createTopic(ctx: AppContext, me: UserRow, chatId: number, title: string, iconEmojiId: string | null) {
  return inTransaction(ctx, async (trx, events) => {
    const chat = await community.view(ctx, me, chatId, 'group', trx)
    community.assertMay(chat, 'group', 'create_topic', undefined, 'Only the owner and admins create topics')
    if (chat.is_forum !== 1) throw validationError('Turn forum mode on first (groups/set-forum)')
    const topic = presentTopic(
      await repo.insertTopic(trx, {
        chat_id: chat.id,
        title: title.trim(),
        icon_emoji_id: iconEmojiId,
        created_by: me.id,
        now: events.now,
      }),
    )
    await events.toChat(chat, 'chat.updated', { chat_id: chat.id, topic })
    return topic
  })
}

export async function listTopics(ctx: AppContext, me: UserRow, chatId: number) {
  const chat = await community.view(ctx, me, chatId, 'group')
  return (await repo.listTopics(ctx.db, chat.id)).map(presentTopic)
}
