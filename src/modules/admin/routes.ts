import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireAdmin } from '../../http/auth.js'
import { ok, okPage, okPageSchema, okSchema } from '../../http/envelope.js'
import { AdminUser, Id, IdParams, Nullable, PageQuery, Timestamp } from '../../http/schemas.js'
import { emptyBodyAsObject } from '../../http/validation.js'
import * as moderation from '../reports/moderation.js'
import * as admin from './service.js'

const UsersQuery = Type.Object(
  { ...PageQuery.properties, q: Type.Optional(Type.String({ maxLength: 254 })) },
  { additionalProperties: false },
)
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
const ReportStatusSchema = Type.Union([Type.Literal('pending'), Type.Literal('resolved'), Type.Literal('dismissed')], { errorMessage: 'must be pending, resolved or dismissed' })
const ReportsQuery = Type.Object({ ...PageQuery.properties, status: Type.Optional(ReportStatusSchema) }, { additionalProperties: false })
const ResolveBody = Type.Object(
  {
    status: Type.Union([Type.Literal('resolved'), Type.Literal('dismissed')], { errorMessage: 'status must be resolved or dismissed' }),
    note: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
)
const AdminReport = Type.Object({
  report_id: Type.Integer(),
  status: Type.String(),
  reason: Type.String(),
  created_at: Timestamp,
  reporter: Type.Object({ user_id: Type.Integer(), username: Type.String() }),
  reported_user: Nullable(Type.Object({ user_id: Type.Integer(), username: Type.String(), is_active: Type.Boolean() })),
  message: Nullable(
    Type.Object({
      message_id: Type.Integer(),
      chat_id: Nullable(Type.Integer()),
      content: Nullable(Type.String()),
      deleted_for_all: Type.Boolean(),
      created_at: Nullable(Timestamp),
    }),
  ),
  resolved_at: Nullable(Timestamp),
  resolved_by: Nullable(Type.Integer()),
  note: Nullable(Type.String()),
})

const secured = { tags: ['admin'], security: [{ bearer: [] }] }

export const adminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preHandler', requireAdmin(ctx))

  app.get('/users', {
    schema: { summary: 'List and search users (admin)', ...secured, querystring: UsersQuery, response: { 200: okPageSchema(AdminUser) } },
  }, async (request) => {
    const { q, page, per_page: perPage } = request.query
    const { items, total } = await admin.listUsers(ctx, request.user, q?.trim() || undefined, page, perPage)
    return okPage(items, { page, perPage, total })
  })

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

  app.get('/modlog', {
    schema: { summary: 'The moderation log, newest first; by admin, action or target (admin)', ...secured, querystring: ModLogQuery, response: { 200: okPageSchema(ModLogItem) } },
  }, async (request) => {
    const { page, per_page: perPage, admin_id: adminId, action, target_id: targetId } = request.query
    const { items, total } = await admin.listModLog(ctx, request.user, page, perPage, { adminId, action, targetId })
    return okPage(items, { page, perPage, total })
  })

  app.get('/reports', {
    schema: { summary: 'The reports queue, newest first (admin)', ...secured, querystring: ReportsQuery, response: { 200: okPageSchema(AdminReport) } },
  }, async (request) => {
    const { status, page, per_page: perPage } = request.query
    const { items, total } = await moderation.queue(ctx, request.user, status, page, perPage)
    return okPage(items, { page, perPage, total })
  })

  app.post('/reports/:id/resolve', {
    schema: { summary: 'Close a report as resolved or dismissed, with a note (admin)', ...secured, params: IdParams, body: ResolveBody, response: { 200: okSchema(AdminReport) } },
  }, async (request) => ok(await moderation.close(ctx, request.user, request.params.id, request.body.status, request.body.note)))
}
