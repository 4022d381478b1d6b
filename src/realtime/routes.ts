import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../context.js'
import { requireUser } from '../http/auth.js'
import { validationError } from '../http/errors.js'
import { Id } from '../http/schemas.js'
import { requireReader } from '../modules/chats/service.js'
import * as chatLog from './chat-log.js'
import * as updates from './updates.js'

const UpdatesQuery = Type.Object(
  {
    since: Type.Integer({ minimum: 0, default: 0, description: 'the last seq the client has seen' }),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  },
  { additionalProperties: false },
)

const UpdateItem = Type.Object({
  type: Type.String(),
  seq: Type.Integer(),
  data: Type.Object({}, { additionalProperties: true }),
})

const UpdatesResult = Type.Object({
  success: Type.Literal(true),
  items: Type.Array(UpdateItem),
  /** the user's latest seq: when it exceeds the last item's, ask again */
  seq: Type.Integer(),
  /** true when updates after `since` were pruned: reload state (chat list, histories), then go on */
  reset: Type.Boolean(),
})

const ChatUpdatesQuery = Type.Object(
  {
    chat_id: Id,
    since: Type.Integer({ minimum: 0, default: 0, description: 'the last chat_seq the client has seen in this chat' }),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  },
  { additionalProperties: false },
)

const ChatUpdatesResult = Type.Object({
  success: Type.Literal(true),
  items: Type.Array(Type.Object({ type: Type.String(), chat_id: Type.Integer(), chat_seq: Type.Integer(), data: Type.Object({}, { additionalProperties: true }) })),
  /** the chat's latest chat_seq */
  chat_seq: Type.Integer(),
  reset: Type.Boolean(),
})

export const updatesRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preHandler', requireUser(ctx))

  app.get('/updates', {
    schema: { tags: ['realtime'], security: [{ bearer: [] }], querystring: UpdatesQuery, response: { 200: UpdatesResult } },
  }, async (request) => {
    const [items, seq, oldest] = await Promise.all([
      updates.since(ctx.db, request.user.id, request.query.since, request.query.limit),
      updates.currentSeq(ctx, request.user.id),
      updates.oldestSeq(ctx.db, request.user.id),
    ])
    const reset = oldest !== null && oldest > request.query.since + 1
    return { success: true as const, items: items as { type: string; seq: number; data: Record<string, unknown> }[], seq, reset }
  })

  /** A group's or channel's own event log (DESIGN §4): what a member missed in that chat. */
  app.get('/chat/updates', {
    schema: { tags: ['realtime'], security: [{ bearer: [] }], querystring: ChatUpdatesQuery, response: { 200: ChatUpdatesResult } },
  }, async (request) => {
    const { chat_id: chatId, since, limit } = request.query
    const chat = await requireReader(ctx, request.user.id, chatId)
    if (chat.chat_type === 'personal') throw validationError('A personal chat has no log of its own: use GET updates')
    const [items, oldest] = await Promise.all([chatLog.since(ctx.db, chat.id, since, limit), chatLog.oldestSeq(ctx.db, chat.id)])
    const reset = oldest !== null && oldest > since + 1
    return { success: true as const, items: items as { type: string; chat_id: number; chat_seq: number; data: Record<string, unknown> }[], chat_seq: chat.event_seq, reset }
  })
}
