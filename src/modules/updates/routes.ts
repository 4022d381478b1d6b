import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { validationError } from '../../http/errors.js'
import { ok, okSchema } from '../../http/envelope.js'
import * as chatLog from '../../realtime/chat-log.js'
import * as updates from '../../realtime/updates.js'
import { requireReader } from '../chats/index.js'
import { presentByIds } from '../messages/index.js'
import { ChatUpdatesQuery, UpdateItem, UpdatesQuery } from './schemas.js'

const UpdatesResult = okSchema(
  Type.Object({
    updates: Type.Array(UpdateItem),
    /** the user's latest seq: when it exceeds the last update's, ask again */
    seq: Type.Integer(),
    /**
     * true when the client's state is not this log's: updates after `since` were pruned, or `since`
     * is beyond the latest seq. Reload state (chat list, histories), then go on from `seq`.
     */
    reset: Type.Boolean(),
  }),
)

const ChatUpdatesResult = okSchema(
  Type.Object({
    updates: Type.Array(
      Type.Object({
        type: Type.String(),
        chat_id: Type.Integer(),
        chat_seq: Type.Integer(),
        data: Type.Object({}, { additionalProperties: true }),
      }),
    ),
    /** the chat's latest chat_seq */
    chat_seq: Type.Integer(),
    reset: Type.Boolean(),
  }),
)

/** The client's cursor is off this log: pruned past it, or ahead of the latest seq. */
const needsReset = (since: number, oldest: number | null, latest: number) => since > latest || (oldest !== null && oldest > since + 1)

export const updatesRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.get(
    '/updates',
    {
      schema: {
        summary: 'My update log after a seq (what a socket would have delivered)',
        tags: ['realtime'],
        security: [{ bearer: [] }],
        querystring: UpdatesQuery,
        response: { 200: UpdatesResult },
      },
    },
    async (request) => {
      const [items, seq, oldest] = await Promise.all([
        updates.since(ctx, request.user.id, request.query.since, request.query.limit, presentByIds),
        updates.currentSeq(ctx, request.user.id),
        updates.oldestSeq(ctx, request.user.id),
      ])
      return ok({
        updates: items as { type: string; seq: number; data: Record<string, unknown> }[],
        seq,
        reset: needsReset(request.query.since, oldest, seq),
      })
    },
  )

  /** A group's or channel's own event log (docs/realtime.md): what a member missed in that chat. */
  app.get(
    '/chat/updates',
    {
      schema: {
        summary: 'A group’s or channel’s event log after a chat_seq',
        tags: ['realtime'],
        security: [{ bearer: [] }],
        querystring: ChatUpdatesQuery,
        response: { 200: ChatUpdatesResult },
      },
    },
    async (request) => {
      const { chat_id: chatId, since, limit } = request.query
      const chat = await requireReader(ctx, request.user.id, chatId)
      if (chat.chat_type === 'personal') throw validationError('A personal chat has no log of its own: use GET updates')
      const [items, oldest] = await Promise.all([chatLog.since(ctx.db, chat.id, since, limit), chatLog.oldestSeq(ctx.db, chat.id)])
      const updates = items as { type: string; chat_id: number; chat_seq: number; data: Record<string, unknown> }[]
      return ok({ updates, chat_seq: chat.event_seq, reset: needsReset(since, oldest, chat.event_seq) })
    },
  )
}
