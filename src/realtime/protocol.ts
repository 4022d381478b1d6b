/**
 * The gateway's own frames (docs/realtime.md): what the server sends besides events, and what a
 * client may send. The events themselves are in the EventMap (events/map.ts); the AsyncAPI
 * document (events/asyncapi.ts) is generated from both.
 */
import { Type, type TSchema } from 'typebox'
import type { Turn } from '../lib/lane.js'

const Integer = Type.Integer({ minimum: 0 })
/** the id a client gives a request, echoed in its answer */
export const RequestId = Type.Union([
  Type.String({ minLength: 1, maxLength: 128 }),
  Type.Integer({ minimum: -(2 ** 53) + 1, maximum: 2 ** 53 - 1 }),
])
/** {"<chat_id>": <chat_seq>} */
const ChatPositions = Type.Record(Type.String({ pattern: '^[1-9][0-9]*$' }), Integer)

export interface ControlFrame {
  summary: string
  frame: TSchema
}

/** Frames the server sends that are not events. */
export const SERVER_FRAMES: Record<string, ControlFrame> = {
  ready: {
    summary: "The first frame on every socket: where the user's log stands (seq) and where each group's or channel's log stands.",
    frame: Type.Object({
      type: Type.Literal('ready'),
      data: Type.Object({ user_id: Type.Integer(), seq: Integer, chats: ChatPositions }),
    }),
  },
  reset: {
    summary:
      "The log no longer holds what was asked for (pruned), or the client named a position beyond it (ahead): reload state, then go on. With chat_id it is about that group's or channel's log.",
    frame: Type.Object({
      type: Type.Literal('reset'),
      data: Type.Object({
        reason: Type.Union([Type.Literal('pruned'), Type.Literal('ahead')]),
        chat_id: Type.Optional(Type.Integer()),
        missed_from: Type.Optional(Integer),
        missed_to: Type.Optional(Integer),
        seq: Type.Optional(Integer),
        chat_seq: Type.Optional(Integer),
      }),
    }),
  },
  error: {
    summary:
      'A request refused (with its id, and the code and message its HTTP twin would answer), or a frame the server could not take at all (data.message; an unknown type lists the types it knows). The socket stays open.',
    frame: Type.Union([
      Type.Object({
        type: Type.Literal('error'),
        id: RequestId,
        error: Type.Object({ code: Type.String(), message: Type.String(), retry_after: Type.Optional(Type.Integer({ minimum: 1 })) }),
      }),
      Type.Object({
        type: Type.Literal('error'),
        data: Type.Object({
          message: Type.String(),
          code: Type.Optional(Type.String()),
          retry_after: Type.Optional(Type.Integer({ minimum: 1 })),
          types: Type.Optional(Type.Array(Type.String())),
        }),
      }),
    ]),
  },
  pong: { summary: 'The answer to ping.', frame: Type.Object({ type: Type.Literal('pong'), data: Type.Object({}) }) },
}

/** Frames a client may send. */
export const CLIENT_FRAMES: Record<string, ControlFrame> = {
  resume: {
    summary:
      'Where the client stands (its last seq, and the last chat_seq of each group or channel): the server replays what it missed, then goes on live. Better given in the upgrade URL: ?seq=N&chats=<chat_id>:<chat_seq>,…',
    frame: Type.Object({ type: Type.Literal('resume'), seq: Type.Optional(Integer), chats: Type.Optional(ChatPositions) }),
  },
  ping: {
    summary: 'Asks for a pong (the server also pings every socket at the protocol level).',
    frame: Type.Object({ type: Type.Literal('ping') }),
  },
}

/**
 * A request a client may make over the socket: `{type, id, data}`, answered by `{type: "ack", id,
 * data: <answer>}` once done (a write: once committed) or by an `error` frame with the same id.
 * The modules define them (with the rules of their HTTP twins); `Caller` is who asks.
 */
export interface RequestSpec<Caller> {
  summary: string
  /** the HTTP route that does the same (the same checks, errors and events) */
  twin: string
  data: TSchema
  answer: TSchema
  /** requests of one socket with the same lane are done in the order they came (see SocketRequests) */
  lane(data: Record<string, unknown>): string
  /**
   * runs it with `data` as `data` checked it (a method, so each spec may name its data's type);
   * `turn`: its place in its lane, for a request that can let the next start early (lib/lane.ts)
   */
  run(caller: Caller, data: unknown, turn: Turn): Promise<unknown>
}

/** The frame a request travels in. */
export const requestFrame = (type: string, data: TSchema) => Type.Object({ type: Type.Literal(type), id: RequestId, data })
/**
 * The frame its answer travels in. The ack of a send, on the socket that sent it, also stands for
 * the sender's own message.new: it carries that update's seq, in its place in the user's log.
 */
export const ackFrame = (answers: TSchema[]) =>
  Type.Object({
    type: Type.Literal('ack'),
    id: RequestId,
    seq: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "on a send's ack: the seq of the sender's message.new, which this socket gets as this ack instead",
      }),
    ),
    data: answers.length === 1 ? answers[0] : Type.Union(answers),
  })
