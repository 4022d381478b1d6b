import { Type } from 'typebox'
import { AdminUser, Id, Nullable, PageQuery, Timestamp } from '../../http/schemas.js'

export const UsersQuery = Type.Object(
  {
    ...PageQuery.properties,
    q: Type.Optional(Type.String({ maxLength: 254 })),
    is_active: Type.Optional(Type.Boolean()),
    is_admin: Type.Optional(Type.Boolean()),
    is_premium: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

export const AdminUserDetail = Type.Object({
  ...AdminUser.properties,
  is_system: Type.Boolean(),
  warnings: Type.Integer(),
  sessions_count: Type.Integer(),
  reports: Type.Object({ total: Type.Integer(), pending: Type.Integer() }),
  premium: Type.Object({ is_premium: Type.Boolean(), expires_at: Nullable(Timestamp) }),
  two_factor_enabled: Type.Boolean(),
})

export const MailTestBody = Type.Object(
  { to: Type.String({ format: 'email', maxLength: 254, errorMessage: 'to must be a valid email address' }) },
  { additionalProperties: false },
)

export const BroadcastBody = Type.Object({ content: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false })

export const Broadcast = Type.Object({
  broadcast_id: Type.Integer(),
  content: Type.String(),
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done')]),
  sent: Type.Integer(),
  total: Type.Integer(),
  created_at: Timestamp,
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
})

export const DayCount = Type.Object({ day: Type.String(), count: Type.Integer() })

export const AdminStats = Type.Object({
  users: Type.Integer(),
  premium_users: Type.Integer(),
  channels: Type.Integer(),
  messages: Type.Integer(),
  files_bytes: Type.Integer(),
  messages_per_day: Type.Array(DayCount),
  active_users_per_day: Type.Array(DayCount),
})

export const Health = Type.Object({ status: Type.String(), latency_ms: Nullable(Type.Number()), error: Nullable(Type.String()) })

export const ServerStatus = Type.Object({
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

export const BanBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false })

export const RoleBody = Type.Object({ is_admin: Type.Boolean() }, { additionalProperties: false })

export const ModLogItem = Type.Object({
  id: Type.Integer(),
  admin_id: Nullable(Type.Integer()),
  admin_username: Nullable(Type.String()),
  action: Type.String(),
  target_id: Nullable(Type.Integer()),
  details: Nullable(Type.Object({}, { additionalProperties: true })),
  created_at: Timestamp,
})

export const ModLogQuery = Type.Object(
  {
    ...PageQuery.properties,
    admin_id: Type.Optional(Id),
    action: Type.Optional(Type.String({ maxLength: 64 })),
    target_id: Type.Optional(Id),
  },
  { additionalProperties: false },
)
