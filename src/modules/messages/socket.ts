/**
 * The messages requests a client may make over its socket (docs/realtime.md): send, edit, delete,
 * react and read. Each is its HTTP twin with the message id moved into `data`: the same schema,
 * the same service call, so the same rules, errors, idempotency (client_message_id) and events.
 */
import { Type, type Static } from 'typebox'
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { Id } from '../../http/schemas.js'
import type { RequestSpec } from '../../realtime/protocol.js'
import * as actions from './actions.js'
import { DeleteOptions, DeleteResult, EditBody, MessageView, ReactionBody, ReactionResult, ReadResult, SendMessageBody } from './schemas.js'
import * as messages from './service.js'

/** Who asks: the socket's session's user, as it is now. */
export interface Caller {
  ctx: AppContext
  me: UserRow
}

/** An HTTP body with the path's message id moved in. */
const aboutMessage = <P extends object>(body: { properties: P }) =>
  Type.Object({ message_id: Id, ...body.properties }, { additionalProperties: false })

const EditData = aboutMessage(EditBody)
const DeleteData = aboutMessage(DeleteOptions)
const ReactData = aboutMessage(ReactionBody)
const ReadData = aboutMessage(Type.Object({}))

/**
 * A lane's key from a field of the client's data, not yet checked: only a number or a string
 * names one (String() of an object can throw: `{"toString": null}`); anything else is refused by
 * the schema anyway, so it may share a lane.
 */
const key = (value: unknown) => (typeof value === 'number' || typeof value === 'string' ? String(value) : '-')

/** one lane per message: what is done to it happens in the order asked */
const messageLane = (data: Record<string, unknown>) => `message:${key(data.message_id)}`

export const MESSAGE_REQUESTS = new Map<string, RequestSpec<Caller>>([
  [
    'send',
    {
      summary:
        'Send a message; the ack carries it once stored. Sends of one socket to one chat are stored in the order they came (several may share a commit).',
      twin: 'POST /api.v2/api/messages/send',
      data: SendMessageBody,
      answer: MessageView,
      lane: (data) => (data.chat_id !== undefined ? `chat:${key(data.chat_id)}` : `user:${key(data.receiver_id)}`),
      run: ({ ctx, me }, data: Static<typeof SendMessageBody>, turn) => messages.send(ctx, me, data, { turn }),
    },
  ],
  [
    'edit',
    {
      summary: 'Edit my message.',
      twin: 'POST /api.v2/api/messages/{id}/edit',
      data: EditData,
      answer: MessageView,
      lane: messageLane,
      run: ({ ctx, me }, data: Static<typeof EditData>) => actions.edit(ctx, me, data.message_id, data.content),
    },
  ],
  [
    'delete',
    {
      summary: 'Delete a message for me, or for everyone (for_all).',
      twin: 'DELETE /api.v2/api/messages/{id}',
      data: DeleteData,
      answer: DeleteResult,
      lane: messageLane,
      run: ({ ctx, me }, data: Static<typeof DeleteData>) => actions.remove(ctx, me, data.message_id, data.for_all ?? false),
    },
  ],
  [
    'react',
    {
      summary: 'Set (or with emoji null remove) my reaction; the ack carries the reactions map.',
      twin: 'POST /api.v2/api/messages/{id}/reaction',
      data: ReactData,
      answer: ReactionResult,
      lane: messageLane,
      run: ({ ctx, me }, data: Static<typeof ReactData>) => actions.react(ctx, me, data.message_id, data.emoji),
    },
  ],
  [
    'read',
    {
      summary: 'Mark the chat read up to this message.',
      twin: 'POST /api.v2/api/messages/{id}/read',
      data: ReadData,
      answer: ReadResult,
      lane: messageLane,
      run: ({ ctx, me }, data: Static<typeof ReadData>) => actions.read(ctx, me, data.message_id),
    },
  ],
])
