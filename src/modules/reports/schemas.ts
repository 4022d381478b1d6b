/** The reports' shapes in the admin area. */
import { Type } from 'typebox'
import { PageQuery, Nullable, Timestamp } from '../../http/schemas.js'
import { Id } from '../../http/schemas.js'

export const ActionBody = Type.Object(
  {
    action: Type.Union([Type.Literal('ban_user'), Type.Literal('delete_message'), Type.Literal('warn_user')], {
      errorMessage: 'action must be ban_user, delete_message or warn_user',
    }),
    note: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
)

export const ReportStatusSchema = Type.Union([Type.Literal('pending'), Type.Literal('resolved'), Type.Literal('dismissed')], {
  errorMessage: 'must be pending, resolved or dismissed',
})
export const ReportsQuery = Type.Object(
  { ...PageQuery.properties, status: Type.Optional(ReportStatusSchema) },
  { additionalProperties: false },
)
export const ResolveBody = Type.Object(
  {
    status: Type.Union([Type.Literal('resolved'), Type.Literal('dismissed')], { errorMessage: 'status must be resolved or dismissed' }),
    note: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
)
export const AdminReport = Type.Object({
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

export const ReportBody = Type.Object(
  {
    reported_user_id: Type.Optional(Id),
    reported_message_id: Type.Optional(Id),
    reason: Type.String({ minLength: 1, maxLength: 1000 }),
  },
  { additionalProperties: false },
)

export const ReportView = Type.Object({ report_id: Type.Integer(), status: Type.String() })
