import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okItems, okItemsSchema, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { InviteLink, MemberChange } from '../groups/index.js'
import {
  BindBody,
  Channel,
  ChannelAvatarBody,
  ChannelDescriptionBody,
  ChannelIdBody,
  ChannelIdParams,
  ChannelIdQuery,
  ChannelInviteBody,
  ChannelRevokeBody,
  ChannelTitleBody,
  ChannelUserBody,
  CreateChannelBody,
  SubscribeBody,
  Subscriber,
  SubscribersQuery,
} from './schemas.js'
import * as channels from './service.js'

const secured = { tags: ['channels'], security: [{ bearer: [] }] }
const ChannelResponse = { 200: okSchema(Channel) }
const ChangeResponse = { 200: okSchema(MemberChange) }

export const channelRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/channels/create',
    { schema: { summary: 'Create a channel', ...secured, body: CreateChannelBody, response: ChannelResponse } },
    async (request) => ok(await channels.create(ctx, request.user, request.body)),
  )

  app.get(
    '/channels/info',
    { schema: { summary: 'A channel by channel_id', ...secured, querystring: ChannelIdQuery, response: ChannelResponse } },
    async (request) => ok(await channels.get(ctx, request.user, request.query.channel_id)),
  )

  app.get(
    '/channels/subscribers',
    {
      schema: {
        summary: 'A page of a channel’s subscribers',
        ...secured,
        querystring: SubscribersQuery,
        response: { 200: okPageSchema(Subscriber) },
      },
    },
    async (request) => {
      const { channel_id, page, per_page: perPage } = request.query
      const { items, total } = await channels.subscriberPage(ctx, request.user, channel_id, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )

  app.post(
    '/channels/subscribe',
    {
      schema: {
        summary: 'Subscribe to a public channel (or through an invite link)',
        ...secured,
        body: SubscribeBody,
        response: ChannelResponse,
      },
    },
    async (request) => ok(await channels.subscribe(ctx, request.user, request.body)),
  )

  app.post(
    '/channels/unsubscribe',
    {
      schema: {
        summary: 'Leave a channel',
        ...secured,
        body: ChannelIdBody,
        response: { 200: okSchema(Type.Object({ chat_id: Type.Integer(), left: Type.Boolean(), dissolved: Type.Boolean() })) },
      },
    },
    async (request) => ok(await channels.unsubscribe(ctx, request.user, request.body.channel_id)),
  )

  app.post(
    '/channels/set-title',
    { schema: { summary: 'Rename a channel', ...secured, body: ChannelTitleBody, response: ChannelResponse } },
    async (request) => ok(await channels.edit(ctx, request.user, request.body.channel_id, { title: request.body.title })),
  )

  app.post(
    '/channels/set-description',
    { schema: { summary: 'Set a channel’s description', ...secured, body: ChannelDescriptionBody, response: ChannelResponse } },
    async (request) => ok(await channels.edit(ctx, request.user, request.body.channel_id, { description: request.body.description })),
  )

  app.post(
    '/channels/set-avatar',
    { schema: { summary: 'Set or clear a channel’s avatar', ...secured, body: ChannelAvatarBody, response: ChannelResponse } },
    async (request) => ok(await channels.edit(ctx, request.user, request.body.channel_id, { avatar: request.body.avatar })),
  )

  app.post(
    '/channels/verify',
    { schema: { summary: 'Mark a channel verified (platform admins)', ...secured, body: ChannelIdBody, response: ChannelResponse } },
    async (request) => ok(await channels.verify(ctx, request.user, request.body.channel_id)),
  )

  app.post(
    '/channels/add-admin',
    { schema: { summary: 'Make a subscriber an admin of the channel', ...secured, body: ChannelUserBody, response: ChangeResponse } },
    async (request) => ok(await channels.addAdmin(ctx, request.user, request.body.channel_id, request.body.user_id)),
  )

  app.post(
    '/channels/remove-admin',
    { schema: { summary: 'Make a channel admin a plain subscriber again', ...secured, body: ChannelUserBody, response: ChangeResponse } },
    async (request) => ok(await channels.removeAdmin(ctx, request.user, request.body.channel_id, request.body.user_id)),
  )

  app.post(
    '/channels/remove-subscriber',
    { schema: { summary: 'Remove a subscriber from a channel', ...secured, body: ChannelUserBody, response: ChangeResponse } },
    async (request) => ok(await channels.removeSubscriber(ctx, request.user, request.body.channel_id, request.body.user_id)),
  )

  app.post(
    '/channels/transfer',
    { schema: { summary: 'Hand the channel to another subscriber', ...secured, body: ChannelUserBody, response: ChannelResponse } },
    async (request) => ok(await channels.transfer(ctx, request.user, request.body.channel_id, request.body.user_id)),
  )

  app.post(
    '/channels/invite-link/create',
    {
      schema: {
        summary: 'Create an invite link, with an optional expiry and usage limit',
        ...secured,
        body: ChannelInviteBody,
        response: { 200: okSchema(InviteLink) },
      },
    },
    async (request) => {
      const { channel_id, ...options } = request.body
      return ok(await channels.createInvite(ctx, request.user, channel_id, options))
    },
  )

  app.post(
    '/channels/invite-link/revoke',
    { schema: { summary: 'Revoke an invite link', ...secured, body: ChannelRevokeBody, response: { 200: okSchema(InviteLink) } } },
    async (request) => ok(await channels.revokeInvite(ctx, request.user, request.body.channel_id, request.body.code)),
  )

  app.get(
    '/channels/invite-links',
    {
      schema: {
        summary: 'A channel’s invite links (owner and admins)',
        ...secured,
        querystring: ChannelIdQuery,
        response: { 200: okItemsSchema(InviteLink) },
      },
    },
    async (request) => okItems(await channels.listInvites(ctx, request.user, request.query.channel_id)),
  )

  app.post(
    '/channels/bind-group',
    { schema: { summary: 'Bind a discussion group to a channel', ...secured, body: BindBody, response: ChannelResponse } },
    async (request) => ok(await channels.bindGroup(ctx, request.user, request.body.channel_id, request.body.group_id)),
  )

  app.post(
    '/channels/unbind-group',
    { schema: { summary: 'Unbind a channel’s discussion group', ...secured, body: ChannelIdBody, response: ChannelResponse } },
    async (request) => ok(await channels.bindGroup(ctx, request.user, request.body.channel_id, null)),
  )

  // after the fixed paths: /channels/info and the rest are not ids
  app.get(
    '/channels/:id',
    {
      schema: {
        summary: 'A channel by id, with its admins and my subscription',
        ...secured,
        params: ChannelIdParams,
        response: ChannelResponse,
      },
    },
    async (request) => ok(await channels.get(ctx, request.user, request.params.id)),
  )
}
