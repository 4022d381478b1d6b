/**
 * The gateway's own frames (docs/realtime.md): what the server sends besides events, and what a
 * client may send. The events themselves are in the EventMap (events/map.ts); the AsyncAPI
 * document (events/asyncapi.ts) is generated from both.
 */
import { Type, type TSchema } from 'typebox'

const Integer = Type.Integer({ minimum: 0 })
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
    summary: 'A frame the server could not take; the socket stays open. An unknown type lists the types it knows.',
    frame: Type.Object({
      type: Type.Literal('error'),
      data: Type.Object({ message: Type.String(), types: Type.Optional(Type.Array(Type.String())) }),
    }),
  },
  pong: { summary: 'The answer to ping.', frame: Type.Object({ type: Type.Literal('pong'), data: Type.Object({}) }) },
}

/** Frames a client may send. */
export const CLIENT_FRAMES: Record<string, ControlFrame> = {
  resume: {
    summary:
      "Where the client stands (its last seq, and the last chat_seq of each group or channel): the server replays what it missed, then goes on live. Better given in the upgrade URL: ?seq=N&chats=<chat_id>:<chat_seq>,…",
    frame: Type.Object({ type: Type.Literal('resume'), seq: Type.Optional(Integer), chats: Type.Optional(ChatPositions) }),
  },
  ping: { summary: 'Asks for a pong (the server also pings every socket at the protocol level).', frame: Type.Object({ type: Type.Literal('ping') }) },
}
