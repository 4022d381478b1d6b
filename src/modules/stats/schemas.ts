import { Type } from 'typebox'

export const Health = Type.Object({
  success: Type.Literal(true),
  // Top-level too, for probes that read `status` without knowing the envelope.
  status: Type.Literal('ok'),
  data: Type.Object({ status: Type.Literal('ok'), database: Type.Literal('ok') }),
})

export const Unhealthy = Type.Object({
  success: Type.Literal(false),
  status: Type.Literal('error'),
  error: Type.Object({ code: Type.String(), message: Type.String() }),
})

export const Stats = Type.Object({ users: Type.Integer(), messages: Type.Integer(), channels: Type.Integer() })
