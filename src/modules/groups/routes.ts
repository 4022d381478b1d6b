import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okItems, okItemsSchema, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import {
  AvatarBody,
  ChatIdBody,
  ChatIdQuery,
  CreateGroupBody,
  CreateInviteBody,
  CreateTopicBody,
  DescriptionBody,
  ForumBody,
  Group,
  InviteLink,
  JoinBody,
  MemberBody,
  MemberChange,
  Member,
  MembersQuery,
  RevokeInviteBody,
  TitleBody,
} from './schemas.js'
import * as groups from './service.js'
import { Topic } from '../chats/index.js'

const secured = { tags: ['groups'], security: [{ bearer: [] }] }
const GroupResponse = { 200: okSchema(Group) }
const ChangeResponse = { 200: okSchema(MemberChange) }

export const groupRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/groups/create',
    { schema: { summary: 'Create a group', ...secured, body: CreateGroupBody, response: GroupResponse } },
    async (request) => ok(await groups.create(ctx, request.user, request.body)),
  )

  app.get(
    '/groups/info',
    { schema: { summary: 'A group by chat_id', ...secured, querystring: ChatIdQuery, response: GroupResponse } },
    async (request) => ok(await groups.info(ctx, request.user, request.query.chat_id)),
  )

  app.get(
    '/groups/members',
    { schema: { summary: 'A page of a group’s members', ...secured, querystring: MembersQuery, response: { 200: okPageSchema(Member) } } },
    async (request) => {
      const { chat_id, page, per_page: perPage } = request.query
      const { items, total } = await groups.memberPage(ctx, request.user, chat_id, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )

  app.post(
    '/groups/add-member',
    { schema: { summary: 'Add a user to a group', ...secured, body: MemberBody, response: ChangeResponse } },
    async (request) => ok(await groups.addMember(ctx, request.user, request.body.chat_id, request.body.user_id)),
  )

  app.post(
    '/groups/remove-member',
    { schema: { summary: 'Remove a member from a group', ...secured, body: MemberBody, response: ChangeResponse } },
    async (request) => ok(await groups.removeMember(ctx, request.user, request.body.chat_id, request.body.user_id)),
  )

  app.post(
    '/groups/promote',
    { schema: { summary: 'Make a member an admin', ...secured, body: MemberBody, response: ChangeResponse } },
    async (request) => ok(await groups.promote(ctx, request.user, request.body.chat_id, request.body.user_id)),
  )

  app.post(
    '/groups/demote',
    { schema: { summary: 'Make an admin a plain member again', ...secured, body: MemberBody, response: ChangeResponse } },
    async (request) => ok(await groups.demote(ctx, request.user, request.body.chat_id, request.body.user_id)),
  )

  app.post(
    '/groups/transfer',
    { schema: { summary: 'Hand the group to another member', ...secured, body: MemberBody, response: GroupResponse } },
    async (request) => ok(await groups.transfer(ctx, request.user, request.body.chat_id, request.body.user_id)),
  )

  app.post(
    '/groups/set-title',
    { schema: { summary: 'Rename a group', ...secured, body: TitleBody, response: GroupResponse } },
    async (request) => ok(await groups.edit(ctx, request.user, request.body.chat_id, { title: request.body.title })),
  )

  app.post(
    '/groups/set-description',
    { schema: { summary: 'Set a group’s description', ...secured, body: DescriptionBody, response: GroupResponse } },
    async (request) => ok(await groups.edit(ctx, request.user, request.body.chat_id, { description: request.body.description })),
  )

  app.post(
    '/groups/set-avatar',
    { schema: { summary: 'Set or clear a group’s avatar', ...secured, body: AvatarBody, response: GroupResponse } },
    async (request) => ok(await groups.edit(ctx, request.user, request.body.chat_id, { avatar: request.body.avatar })),
  )

  app.post(
    '/groups/set-forum',
    { schema: { summary: 'Turn forum mode (topics) on or off', ...secured, body: ForumBody, response: GroupResponse } },
    async (request) => ok(await groups.edit(ctx, request.user, request.body.chat_id, { is_forum: request.body.is_forum })),
  )

  app.post(
    '/groups/leave',
    {
      schema: {
        summary: 'Leave a group',
        ...secured,
        body: ChatIdBody,
        response: { 200: okSchema(Type.Object({ chat_id: Type.Integer(), left: Type.Boolean(), dissolved: Type.Boolean() })) },
      },
    },
    async (request) => ok(await groups.leave(ctx, request.user, request.body.chat_id)),
  )

  app.post(
    '/groups/invite-link/create',
    {
      schema: {
        summary: 'Create an invite link, with an optional expiry and usage limit',
        ...secured,
        body: CreateInviteBody,
        response: { 200: okSchema(InviteLink) },
      },
    },
    async (request) => {
      const { chat_id, ...options } = request.body
      return ok(await groups.createInvite(ctx, request.user, chat_id, options))
    },
  )

  app.post(
    '/groups/invite-link/revoke',
    { schema: { summary: 'Revoke an invite link', ...secured, body: RevokeInviteBody, response: { 200: okSchema(InviteLink) } } },
    async (request) => ok(await groups.revokeInvite(ctx, request.user, request.body.chat_id, request.body.code)),
  )

  app.get(
    '/groups/invite-links',
    {
      schema: {
        summary: 'A group’s invite links (owner and admins)',
        ...secured,
        querystring: ChatIdQuery,
        response: { 200: okItemsSchema(InviteLink) },
      },
    },
    async (request) => okItems(await groups.listInvites(ctx, request.user, request.query.chat_id)),
  )

  app.post(
    '/groups/invite-link/join',
    { schema: { summary: 'Join a group or channel by invite link', ...secured, body: JoinBody, response: GroupResponse } },
    async (request) => ok(await groups.joinByInvite(ctx, request.user, request.body.code)),
  )

  app.post(
    '/groups/topics/create',
    { schema: { summary: 'Create a forum topic', ...secured, body: CreateTopicBody, response: { 200: okSchema(Topic) } } },
    async (request) =>
      ok(await groups.createTopic(ctx, request.user, request.body.chat_id, request.body.title, request.body.icon_emoji_id ?? null)),
  )

  app.get(
    '/groups/topics',
    { schema: { summary: 'A forum group’s topics', ...secured, querystring: ChatIdQuery, response: { 200: okItemsSchema(Topic) } } },
    async (request) => okItems(await groups.listTopics(ctx, request.user, request.query.chat_id)),
  )
}
