import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireAdmin } from '../../http/auth.js'
import { ok, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { AdminUser, IdParams, Nullable, PageQuery } from '../../http/schemas.js'
import { emptyBodyAsObject } from '../../http/validation.js'
import * as broadcasts from '../broadcasts/index.js'
import * as stats from '../stats/index.js'
import * as admin from './service.js'
import * as modlog from '../modlog/index.js'
import {
  AdminStats,
  AdminUserDetail,
  BanBody,
  Broadcast,
  BroadcastBody,
  MailTestBody,
  ModLogItem,
  ModLogQuery,
  RoleBody,
  ServerStatus,
  UsersQuery,
} from './schemas.js'

const secured = { tags: ['admin'], security: [{ bearer: [] }] }

export const adminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  // before validation: a non-admin learns nothing about the admin bodies, not even that theirs was wrong
  app.addHook('preValidation', requireAdmin(ctx))

  app.get(
    '/users',
    {
      schema: { summary: 'List and search users (admin)', ...secured, querystring: UsersQuery, response: { 200: okPageSchema(AdminUser) } },
    },
    async (request) => {
      const { q, page, per_page: perPage, is_active: isActive, is_admin: isAdmin, is_premium: isPremium } = request.query
      const { items, total } = await admin.listUsers(
        ctx,
        request.user,
        { q: q?.trim() || undefined, isActive, isAdmin, isPremium },
        page,
        perPage,
      )
      return okPage(items, { page, perPage, total })
    },
  )

  app.get(
    '/users/:id',
    {
      schema: {
        summary: 'One user in detail: sessions, reports against them, premium, warnings (admin)',
        ...secured,
        params: IdParams,
        response: { 200: okSchema(AdminUserDetail) },
      },
    },
    async (request) => ok(await admin.userDetail(ctx, request.user, request.params.id)),
  )

  app.post(
    '/users/:id/ban',
    {
      schema: {
        summary: 'Ban a user: deactivate the account and end its sessions (admin)',
        ...secured,
        params: IdParams,
        body: BanBody,
        response: { 200: okSchema(AdminUser) },
      },
      preValidation: emptyBodyAsObject,
    },
    async (request) => ok(await admin.ban(ctx, request.user, request.params.id, request.body.reason)),
  )

  app.post(
    '/users/:id/unban',
    {
      schema: { summary: 'Lift a ban (admin)', ...secured, params: IdParams, response: { 200: okSchema(AdminUser) } },
    },
    async (request) => ok(await admin.unban(ctx, request.user, request.params.id)),
  )

  app.post(
    '/users/:id/role',
    {
      schema: {
        summary: 'Grant or revoke the platform admin role (admin)',
        ...secured,
        params: IdParams,
        body: RoleBody,
        response: { 200: okSchema(AdminUser) },
      },
    },
    async (request) => ok(await admin.setRole(ctx, request.user, request.params.id, request.body.is_admin)),
  )

  app.post(
    '/users/:id/2fa/reset',
    {
      schema: {
        summary: "Turn a user's two-factor authentication off (a lost device) (admin)",
        ...secured,
        params: IdParams,
        response: { 200: okSchema(AdminUser) },
      },
    },
    async (request) => ok(await admin.resetTwoFactor(ctx, request.user, request.params.id)),
  )

  app.post(
    '/mail/test',
    {
      schema: {
        summary: 'Send a test mail through the configured transport (admin)',
        ...secured,
        body: MailTestBody,
        response: {
          200: okSchema(
            Type.Object({
              sent: Type.Boolean(),
              message_id: Nullable(Type.String()),
              transport: Type.Union([Type.Literal('smtp'), Type.Literal('log')]),
            }),
          ),
        },
      },
    },
    async (request) => ok(await admin.sendTestMail(ctx, request.user, request.body.to)),
  )

  app.get(
    '/modlog',
    {
      schema: {
        summary: 'The moderation log, newest first; by admin, action or target (admin)',
        ...secured,
        querystring: ModLogQuery,
        response: { 200: okPageSchema(ModLogItem) },
      },
    },
    async (request) => {
      const { page, per_page: perPage, admin_id: adminId, action, target_id: targetId } = request.query
      const { items, total } = await modlog.listModLog(ctx, request.user, page, perPage, { adminId, action, targetId })
      return okPage(items, { page, perPage, total })
    },
  )

  app.post(
    '/broadcast',
    {
      schema: {
        summary: 'Send a platform message from the system account to every active user; delivered in batches by a job (admin)',
        ...secured,
        body: BroadcastBody,
        response: { 202: okSchema(Type.Object({ broadcast_id: Type.Integer(), recipients: Type.Integer() })) },
      },
    },
    async (request, reply) => reply.code(202).send(ok(await broadcasts.start(ctx, request.user, request.body.content))),
  )

  app.get(
    '/broadcasts',
    {
      schema: {
        summary: 'Broadcasts, newest first (admin)',
        ...secured,
        querystring: PageQuery,
        response: { 200: okPageSchema(Broadcast) },
      },
    },
    async (request) => {
      const { page, per_page: perPage } = request.query
      const { items, total } = await broadcasts.list(ctx, request.user, page, perPage)
      return okPage(items, { page, perPage, total })
    },
  )

  app.get(
    '/broadcasts/:id',
    {
      schema: {
        summary: "A broadcast's progress: sent of total (admin)",
        ...secured,
        params: IdParams,
        response: { 200: okSchema(Broadcast) },
      },
    },
    async (request) => ok(await broadcasts.get(ctx, request.user, request.params.id)),
  )

  app.get(
    '/stats',
    {
      schema: {
        summary: 'Platform statistics: totals, messages and active users per day for 30 days (admin)',
        ...secured,
        response: { 200: okSchema(AdminStats) },
      },
    },
    async (request) => ok(await stats.adminStats(ctx, request.user)),
  )

  app.get(
    '/status',
    {
      schema: {
        summary: 'Read-only server status: version, uptime, database and Redis health, jobs, queues (admin)',
        ...secured,
        response: { 200: okSchema(ServerStatus) },
      },
    },
    async (request) => ok(await stats.serverStatus(ctx, request.user)),
  )
}
