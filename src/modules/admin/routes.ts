import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireAdmin } from '../../http/auth.js'
import { ok, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { AdminUser, Id, IdParams, Nullable, PageQuery, Timestamp } from '../../http/schemas.js'
import { emptyBodyAsObject } from '../../http/validation.js'
import * as broadcasts from '../broadcasts/index.js'
import * as stats from '../stats/index.js'
import * as admin from './service.js'
import * as modlog from '../modlog/index.js'

const UsersQuery = Type.Object(
  {
    ...PageQuery.properties,
    q: Type.Optional(Type.String({ maxLength: 254 })),
    is_active: Type.Optional(Type.Boolean()),
    is_admin: Type.Optional(Type.Boolean()),
    is_premium: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
const AdminUserDetail = Type.Object({
  ...AdminUser.properties,
  is_system: Type.Boolean(),
  warnings: Type.Integer(),
  sessions_count: Type.Integer(),
  reports: Type.Object({ total: Type.Integer(), pending: Type.Integer() }),
  premium: Type.Object({ is_premium: Type.Boolean(), expires_at: Nullable(Timestamp) }),
  two_factor_enabled: Type.Boolean(),
})
const MailTestBody = Type.Object(
  { to: Type.String({ format: 'email', maxLength: 254, errorMessage: 'to must be a valid email address' }) },
  { additionalProperties: false },
)
const BroadcastBody = Type.Object({ content: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false })
const Broadcast = Type.Object({
  broadcast_id: Type.Integer(),
  content: Type.String(),
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done')]),
  sent: Type.Integer(),
  total: Type.Integer(),
  created_at: Timestamp,
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
})
const DayCount = Type.Object({ day: Type.String(), count: Type.Integer() })
const AdminStats = Type.Object({
  users: Type.Integer(),
  premium_users: Type.Integer(),
  channels: Type.Integer(),
  messages: Type.Integer(),
  files_bytes: Type.Integer(),
  messages_per_day: Type.Array(DayCount),
  active_users_per_day: Type.Array(DayCount),
})
const Health = Type.Object({ status: Type.String(), latency_ms: Nullable(Type.Number()), error: Nullable(Type.String()) })
const ServerStatus = Type.Object({
  version: Type.String(),
  node: Type.String(),
  started_at: Timestamp,
  uptime_seconds: Type.Integer(),
  dialect: Type.String(),
  database: Health,
  redis: Health,
  memory_mb: Type.Integer(),
  jobs: Type.Array(
    Type.Object({
      name: Type.String(),
      instance: Type.String(),
      scope: Type.String(),
      every_ms: Type.Integer(),
      runs: Type.Integer(),
      failures: Type.Integer(),
      last_started_at: Nullable(Timestamp),
      last_duration_ms: Nullable(Type.Integer()),
      last_error: Nullable(Type.String()),
      lease_holder: Nullable(Type.String()),
    }),
  ),
  queues: Type.Object({ pending_reports: Type.Integer(), unfinished_broadcasts: Type.Integer(), scheduled_messages: Type.Integer() }),
})
const BanBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false })
const RoleBody = Type.Object({ is_admin: Type.Boolean() }, { additionalProperties: false })
const ModLogItem = Type.Object({
  id: Type.Integer(),
  admin_id: Nullable(Type.Integer()),
  admin_username: Nullable(Type.String()),
  action: Type.String(),
  target_id: Nullable(Type.Integer()),
  details: Nullable(Type.Object({}, { additionalProperties: true })),
  created_at: Timestamp,
})

const ModLogQuery = Type.Object(
  {
    ...PageQuery.properties,
    admin_id: Type.Optional(Id),
    action: Type.Optional(Type.String({ maxLength: 64 })),
    target_id: Type.Optional(Id),
  },
  { additionalProperties: false },
)
const secured = { tags: ['admin'], security: [{ bearer: [] }] }

export const adminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  // before validation: a non-admin learns nothing about the admin bodies, not even that theirs was wrong
  app.addHook('preValidation', requireAdmin(ctx))

  app.get('/users', {
    schema: { summary: 'List and search users (admin)', ...secured, querystring: UsersQuery, response: { 200: okPageSchema(AdminUser) } },
  }, async (request) => {
    const { q, page, per_page: perPage, is_active: isActive, is_admin: isAdmin, is_premium: isPremium } = request.query
    const { items, total } = await admin.listUsers(ctx, request.user, { q: q?.trim() || undefined, isActive, isAdmin, isPremium }, page, perPage)
    return okPage(items, { page, perPage, total })
  })

  app.get('/users/:id', {
    schema: { summary: 'One user in detail: sessions, reports against them, premium, warnings (admin)', ...secured, params: IdParams, response: { 200: okSchema(AdminUserDetail) } },
  }, async (request) => ok(await admin.userDetail(ctx, request.user, request.params.id)))

  app.post('/users/:id/ban', {
    schema: { summary: 'Ban a user: deactivate the account and end its sessions (admin)', ...secured, params: IdParams, body: BanBody, response: { 200: okSchema(AdminUser) } },
    preValidation: emptyBodyAsObject,
  }, async (request) => ok(await admin.ban(ctx, request.user, request.params.id, request.body.reason)))

  app.post('/users/:id/unban', {
    schema: { summary: 'Lift a ban (admin)', ...secured, params: IdParams, response: { 200: okSchema(AdminUser) } },
  }, async (request) => ok(await admin.unban(ctx, request.user, request.params.id)))

  app.post('/users/:id/role', {
    schema: { summary: 'Grant or revoke the platform admin role (admin)', ...secured, params: IdParams, body: RoleBody, response: { 200: okSchema(AdminUser) } },
  }, async (request) => ok(await admin.setRole(ctx, request.user, request.params.id, request.body.is_admin)))

  app.post('/users/:id/2fa/reset', {
    schema: { summary: "Turn a user's two-factor authentication off (a lost device) (admin)", ...secured, params: IdParams, response: { 200: okSchema(AdminUser) } },
  }, async (request) => ok(await admin.resetTwoFactor(ctx, request.user, request.params.id)))

  app.post('/mail/test', {
    schema: {
      summary: 'Send a test mail through the configured transport (admin)',
      ...secured,
      body: MailTestBody,
      response: { 200: okSchema(Type.Object({ sent: Type.Boolean(), message_id: Nullable(Type.String()), transport: Type.Union([Type.Literal('smtp'), Type.Literal('log')]) })) },
    },
  }, async (request) => ok(await admin.sendTestMail(ctx, request.user, request.body.to)))

  app.get('/modlog', {
    schema: { summary: 'The moderation log, newest first; by admin, action or target (admin)', ...secured, querystring: ModLogQuery, response: { 200: okPageSchema(ModLogItem) } },
  }, async (request) => {
    const { page, per_page: perPage, admin_id: adminId, action, target_id: targetId } = request.query
    const { items, total } = await modlog.listModLog(ctx, request.user, page, perPage, { adminId, action, targetId })
    return okPage(items, { page, perPage, total })
  })

  app.post('/broadcast', {
    schema: {
      summary: 'Send a platform message from the system account to every active user; delivered in batches by a job (admin)',
      ...secured,
      body: BroadcastBody,
      response: { 202: okSchema(Type.Object({ broadcast_id: Type.Integer(), recipients: Type.Integer() })) },
    },
  }, async (request, reply) => reply.code(202).send(ok(await broadcasts.start(ctx, request.user, request.body.content))))

  app.get('/broadcasts', {
    schema: { summary: 'Broadcasts, newest first (admin)', ...secured, querystring: PageQuery, response: { 200: okPageSchema(Broadcast) } },
  }, async (request) => {
    const { page, per_page: perPage } = request.query
    const { items, total } = await broadcasts.list(ctx, request.user, page, perPage)
    return okPage(items, { page, perPage, total })
  })

  app.get('/broadcasts/:id', {
    schema: { summary: "A broadcast's progress: sent of total (admin)", ...secured, params: IdParams, response: { 200: okSchema(Broadcast) } },
  }, async (request) => ok(await broadcasts.get(ctx, request.user, request.params.id)))

  app.get('/stats', {
    schema: { summary: 'Platform statistics: totals, messages and active users per day for 30 days (admin)', ...secured, response: { 200: okSchema(AdminStats) } },
  }, async (request) => ok(await stats.adminStats(ctx, request.user)))

  app.get('/status', {
    schema: { summary: 'Read-only server status: version, uptime, database and Redis health, jobs, queues (admin)', ...secured, response: { 200: okSchema(ServerStatus) } },
  }, async (request) => ok(await stats.serverStatus(ctx, request.user)))
}
