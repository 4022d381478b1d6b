/** Channels (V2): one-way broadcast chats on top of the communities module. */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { conflict, forbidden, validationError } from '../../http/errors.js'
import { inTransaction } from '../../events/outbox.js'
import * as community from '../communities/index.js'
import type { ChatView } from '../communities/index.js'
import { can } from '../../policies/chats.js'
import { presentChannel, type Staff } from './present.js'
import * as repo from './repo.js'
import type { CreateChannelBody } from './schemas.js'

const link = (ctx: AppContext) => (code: string) => community.inviteLink(ctx, 'channel', code)
const present = (ctx: AppContext, chat: ChatView, staff?: Staff[]) => presentChannel(chat, link(ctx), staff)

/** The full Channel shape: with `is_subscribed` and `admins` (owner first). */
async function full(ctx: AppContext, chat: ChatView) {
  return present(ctx, chat, await community.staff(ctx, chat.id))
}

/** The create response: the Channel shape without is_subscribed and admins. */
export async function create(ctx: AppContext, me: UserRow, input: CreateChannelBody) {
  return present(ctx, await community.create(ctx, me, 'channel', input, true))
}

export async function get(ctx: AppContext, me: UserRow, channelId: number) {
  return full(ctx, await community.view(ctx, me, channelId, 'channel'))
}

/** Subscribers in join order: anyone for a public channel, only its owner and admins for a private one. */
export async function subscriberPage(ctx: AppContext, me: UserRow, channelId: number, page: number, perPage: number) {
  const chat = await community.view(ctx, me, channelId, 'channel')
  if (chat.is_public !== 1 && !can(chat, chat.my_role ?? '', 'list_private_members'))
    throw forbidden('Only the owner and admins see who subscribes to a private channel')
  return community.memberPage(ctx, chat, me.id, page, perPage)
}

/** Subscribes to a public channel by id, or to any channel through its invite code or link. */
export async function subscribe(ctx: AppContext, me: UserRow, input: { channel_id?: number; code?: string }) {
  if (input.code !== undefined) {
    const invite = await community.findInvite(ctx, input.code)
    if (input.channel_id !== undefined && input.channel_id !== invite.chat_id)
      throw validationError('The invite link is not for this channel')
    return full(ctx, await community.join(ctx, me, invite.chat_id, invite, 'channel'))
  }
  if (input.channel_id === undefined) throw validationError('channel_id or code is required')
  return full(ctx, await community.join(ctx, me, input.channel_id, null, 'channel'))
}

export const unsubscribe = (ctx: AppContext, me: UserRow, channelId: number) => community.leave(ctx, me, channelId, 'channel')

export async function edit(ctx: AppContext, me: UserRow, channelId: number, changes: Parameters<typeof community.edit>[4]) {
  return full(ctx, await community.edit(ctx, me, channelId, 'channel', changes))
}

/** A subscriber becomes an admin (may post), or an admin a subscriber again: the owner's call. */
export const addAdmin = (ctx: AppContext, me: UserRow, channelId: number, userId: number) =>
  community.setAdmin(ctx, me, channelId, userId, 'channel', true)
export const removeAdmin = (ctx: AppContext, me: UserRow, channelId: number, userId: number) =>
  community.setAdmin(ctx, me, channelId, userId, 'channel', false)
export const removeSubscriber = (ctx: AppContext, me: UserRow, channelId: number, userId: number) =>
  community.removeMember(ctx, me, channelId, userId, 'channel')

export async function transfer(ctx: AppContext, me: UserRow, channelId: number, userId: number) {
  return full(ctx, await community.transfer(ctx, me, channelId, userId, 'channel'))
}

export const createInvite = (ctx: AppContext, me: UserRow, channelId: number, options: { expires_at?: string; usage_limit?: number }) =>
  community.createInvite(ctx, me, channelId, 'channel', options)
export const revokeInvite = (ctx: AppContext, me: UserRow, channelId: number, code: string) =>
  community.revokeInvite(ctx, me, channelId, 'channel', code)
export const listInvites = (ctx: AppContext, me: UserRow, channelId: number) => community.listInvites(ctx, me, channelId, 'channel')

/** Platform admins mark a channel verified; a ModLog row is written in the same transaction. */
export async function verify(ctx: AppContext, me: UserRow, channelId: number) {
  await community.markVerified(ctx, me, channelId)
  return full(ctx, (await community.findView(ctx.db, channelId, me.id))!)
}

/**
 * Binds a discussion group to the channel (ChannelBind): the channel's owner, who must also be an
 * owner or admin of the group. One group per channel; binding again replaces it.
 */
export async function bindGroup(ctx: AppContext, me: UserRow, channelId: number, groupId: number | null) {
  await inTransaction(ctx, async (trx, events) => {
    const channel = await community.view(ctx, me, channelId, 'channel', trx)
    community.assertMay(channel, 'channel', 'bind', undefined, 'Only the channel owner binds a discussion group')
    await repo.unbind(trx, channel.id)
    if (groupId !== null) {
      const group = await community.view(ctx, me, groupId, 'group', trx)
      community.assertMay(group, 'group', 'edit_info', undefined, 'You must be an owner or admin of the group')
      await repo.bind(trx, channel.id, group.id, events.now)
    } else if (channel.discussion_group_id === null) {
      throw conflict('No discussion group is bound')
    }
    await events.toChat(channel, 'chat.updated', { chat_id: channel.id, discussion_group_id: groupId })
  })
  return get(ctx, me, channelId)
}
