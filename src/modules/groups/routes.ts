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
  Topic,
} from './schemas.js'
import * as groups from './service.js'

const secured = { tags: ['groups'], security: [{ bearer: [] }] }
const GroupResponse = { 200: okSchema(Group) }
const ChangeResponse = { 200: okSchema(MemberChange) }

export const groupRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preHandler', requireUser(ctx))

  app.post('/groups/create', { schema: { ...secured, body: CreateGroupBody, response: GroupResponse } }, async (request) =>
    ok(await groups.create(ctx, request.user, request.body)))

  app.get('/groups/info', { schema: { ...secured, querystring: ChatIdQuery, response: GroupResponse } }, async (request) =>
    ok(await groups.info(ctx, request.user, request.query.chat_id)))

  app.get('/groups/members', { schema: { ...secured, querystring: MembersQuery, response: { 200: okPageSchema(Member) } } }, async (request) => {
    const { chat_id, page, per_page: perPage } = request.query
    const { items, total } = await groups.memberPage(ctx, request.user, chat_id, page, perPage)
    return okPage(items, { page, perPage, total })
  })

  app.post('/groups/add-member', { schema: { ...secured, body: MemberBody, response: ChangeResponse } }, async (request) =>
    ok(await groups.addMember(ctx, request.user, request.body.chat_id, request.body.user_id)))

  app.post('/groups/remove-member', { schema: { ...secured, body: MemberBody, response: ChangeResponse } }, async (request) =>
    ok(await groups.removeMember(ctx, request.user, request.body.chat_id, request.body.user_id)))

  app.post('/groups/promote', { schema: { ...secured, body: MemberBody, response: ChangeResponse } }, async (request) =>
    ok(await groups.promote(ctx, request.user, request.body.chat_id, request.body.user_id)))

  app.post('/groups/demote', { schema: { ...secured, body: MemberBody, response: ChangeResponse } }, async (request) =>
    ok(await groups.demote(ctx, request.user, request.body.chat_id, request.body.user_id)))

  app.post('/groups/transfer', { schema: { ...secured, body: MemberBody, response: GroupResponse } }, async (request) =>
    ok(await groups.transfer(ctx, request.user, request.body.chat_id, request.body.user_id)))

  app.post('/groups/set-title', { schema: { ...secured, body: TitleBody, response: GroupResponse } }, async (request) =>
    ok(await groups.edit(ctx, request.user, request.body.chat_id, { title: request.body.title })))

  app.post('/groups/set-description', { schema: { ...secured, body: DescriptionBody, response: GroupResponse } }, async (request) =>
    ok(await groups.edit(ctx, request.user, request.body.chat_id, { description: request.body.description })))

  app.post('/groups/set-avatar', { schema: { ...secured, body: AvatarBody, response: GroupResponse } }, async (request) =>
    ok(await groups.edit(ctx, request.user, request.body.chat_id, { avatar: request.body.avatar })))

  app.post('/groups/set-forum', { schema: { ...secured, body: ForumBody, response: GroupResponse } }, async (request) =>
    ok(await groups.edit(ctx, request.user, request.body.chat_id, { is_forum: request.body.is_forum })))

  app.post('/groups/leave', {
    schema: { ...secured, body: ChatIdBody, response: { 200: okSchema(Type.Object({ chat_id: Type.Integer(), left: Type.Boolean(), dissolved: Type.Boolean() })) } },
  }, async (request) => ok(await groups.leave(ctx, request.user, request.body.chat_id)))

  app.post('/groups/invite-link/create', { schema: { ...secured, body: CreateInviteBody, response: { 200: okSchema(InviteLink) } } }, async (request) => {
    const { chat_id, ...options } = request.body
    return ok(await groups.createInvite(ctx, request.user, chat_id, options))
  })

  app.post('/groups/invite-link/revoke', { schema: { ...secured, body: RevokeInviteBody, response: { 200: okSchema(InviteLink) } } }, async (request) =>
    ok(await groups.revokeInvite(ctx, request.user, request.body.chat_id, request.body.code)))

  app.get('/groups/invite-links', { schema: { ...secured, querystring: ChatIdQuery, response: { 200: okItemsSchema(InviteLink) } } }, async (request) =>
    okItems(await groups.listInvites(ctx, request.user, request.query.chat_id)))

  app.post('/groups/invite-link/join', { schema: { ...secured, body: JoinBody, response: GroupResponse } }, async (request) =>
    ok(await groups.joinByInvite(ctx, request.user, request.body.code)))

  app.post('/groups/topics/create', { schema: { ...secured, body: CreateTopicBody, response: { 200: okSchema(Topic) } } }, async (request) =>
    ok(await groups.createTopic(ctx, request.user, request.body.chat_id, request.body.title, request.body.icon_emoji_id ?? null)))

  app.get('/groups/topics', { schema: { ...secured, querystring: ChatIdQuery, response: { 200: okItemsSchema(Topic) } } }, async (request) =>
    okItems(await groups.listTopics(ctx, request.user, request.query.chat_id)))
}
