/**
 * The signaling protocol (docs/calls.md): JSON text frames over the video service's WebSocket,
 * each with a schema here. The server checks every client frame against its schema before
 * acting on it; the AsyncAPI document of the video service (video/asyncapi.ts) is generated from
 * the same schemas.
 */
import { Ajv, type ValidateFunction } from 'ajv'
import { Type, type Static, type TSchema } from 'typebox'

/** an SDP offer or answer longer than this is refused */
export const MAX_SDP_BYTES = 64 * 1024
/** a frame longer than this closes the socket (1009) */
export const MAX_FRAME_BYTES = 96 * 1024

const PeerId = Type.String({ pattern: '^[A-Za-z0-9_-]{8,32}$', description: 'a peer (one connection in a room), as the server named it' })
export const RoomId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'the room (VideoCall.room_id)' })
const Sdp = Type.String({ minLength: 1, maxLength: MAX_SDP_BYTES, description: 'the session description (RTCSessionDescription.sdp)' })
const Candidate = Type.Union(
  [
    Type.Object(
      {
        candidate: Type.String({ maxLength: 2048 }),
        sdpMid: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
        sdpMLineIndex: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 1024 }), Type.Null()])),
        usernameFragment: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'RTCIceCandidateInit, or null at the end of candidates' },
)
const Media = {
  audio: Type.Boolean({ description: 'microphone on' }),
  video: Type.Boolean({ description: 'camera on' }),
  screenshare: Type.Boolean({ description: 'sharing the screen' }),
}
export const MediaState = Type.Object(Media)
export type MediaState = Static<typeof MediaState>

export const PeerView = Type.Object({
  peer_id: PeerId,
  user_id: Type.Integer(),
  username: Type.String(),
  audio_only: Type.Boolean(),
  media: MediaState,
})
export type PeerView = Static<typeof PeerView>

export interface FrameDoc {
  summary: string
  frame: TSchema
}

const closed = { additionalProperties: false }

/** Frames a client sends. */
export const CLIENT_FRAMES = {
  join: {
    summary:
      'The first frame: the room ticket from `calls/rooms/{room_id}/join` or `calls/{id}/ticket`. Anything before it, or a bad or already used ticket, closes the socket (4001).',
    frame: Type.Object({ type: Type.Literal('join'), room_id: RoomId, ticket: Type.String({ minLength: 1, maxLength: 2048 }) }, closed),
  },
  offer: {
    summary: 'An SDP offer for one peer of the room.',
    frame: Type.Object({ type: Type.Literal('offer'), to: PeerId, sdp: Sdp }, closed),
  },
  answer: {
    summary: 'An SDP answer to a peer that sent an offer.',
    frame: Type.Object({ type: Type.Literal('answer'), to: PeerId, sdp: Sdp }, closed),
  },
  'ice-candidate': {
    summary: 'An ICE candidate for one peer.',
    frame: Type.Object({ type: Type.Literal('ice-candidate'), to: PeerId, candidate: Candidate }, closed),
  },
  media: {
    summary: "This peer's media state (mute, camera, screen share): told to the room and recorded by the main service.",
    frame: Type.Object({ type: Type.Literal('media'), ...Media }, closed),
  },
  leave: {
    summary: 'Leaves the room; the server closes the socket (1000).',
    frame: Type.Object({ type: Type.Literal('leave') }, closed),
  },
  ping: { summary: 'Asks for a pong.', frame: Type.Object({ type: Type.Literal('ping') }, closed) },
} satisfies Record<string, FrameDoc>

export type ClientFrame =
  | Static<typeof CLIENT_FRAMES.join.frame>
  | Static<typeof CLIENT_FRAMES.offer.frame>
  | Static<typeof CLIENT_FRAMES.answer.frame>
  | Static<(typeof CLIENT_FRAMES)['ice-candidate']['frame']>
  | Static<typeof CLIENT_FRAMES.media.frame>
  | Static<typeof CLIENT_FRAMES.leave.frame>
  | Static<typeof CLIENT_FRAMES.ping.frame>

export const ERROR_CODES = [
  'malformed',
  'unknown_type',
  'not_joined',
  'already_joined',
  'unknown_peer',
  'too_large',
  'unauthorized',
  'forbidden',
  'rate_limited',
  'too_many_sockets',
] as const
export type SignalErrorCode = (typeof ERROR_CODES)[number]

/** Frames the server sends. */
export const SERVER_FRAMES = {
  joined: {
    summary: "The answer to join: this peer's id and the peers already in the room (the newcomer sends each an offer).",
    frame: Type.Object({
      type: Type.Literal('joined'),
      room_id: Type.String(),
      peer_id: PeerId,
      user_id: Type.Integer(),
      peers: Type.Array(PeerView),
    }),
  },
  'peer-joined': {
    summary: 'Another peer joined the room (expect its offer).',
    frame: Type.Object({ type: Type.Literal('peer-joined'), peer: PeerView }),
  },
  'peer-left': {
    summary: 'A peer left the room (or its connection dropped).',
    frame: Type.Object({ type: Type.Literal('peer-left'), peer_id: PeerId, user_id: Type.Integer() }),
  },
  offer: {
    summary: 'An offer from a peer.',
    frame: Type.Object({ type: Type.Literal('offer'), from: PeerId, from_user_id: Type.Integer(), sdp: Sdp }),
  },
  answer: {
    summary: 'An answer from a peer.',
    frame: Type.Object({ type: Type.Literal('answer'), from: PeerId, from_user_id: Type.Integer(), sdp: Sdp }),
  },
  'ice-candidate': {
    summary: 'An ICE candidate from a peer.',
    frame: Type.Object({ type: Type.Literal('ice-candidate'), from: PeerId, from_user_id: Type.Integer(), candidate: Candidate }),
  },
  media: {
    summary: "A peer's media state changed.",
    frame: Type.Object({ type: Type.Literal('media'), from: PeerId, user_id: Type.Integer(), ...Media }),
  },
  error: {
    summary: 'A frame the server did not take; nothing was relayed. Too many of them, or an abuse, and the socket is closed.',
    frame: Type.Object({ type: Type.Literal('error'), code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c))), message: Type.String() }),
  },
  pong: { summary: 'The answer to ping.', frame: Type.Object({ type: Type.Literal('pong') }) },
} satisfies Record<string, FrameDoc>

const ajv = new Ajv({ allErrors: false, strict: false })
const validators = new Map<string, ValidateFunction>(Object.entries(CLIENT_FRAMES).map(([name, doc]) => [name, ajv.compile(doc.frame)]))

export type Parsed = { ok: true; frame: ClientFrame } | { ok: false; code: SignalErrorCode; message: string }

/** A client frame checked against its schema; never throws. */
export function parseClientFrame(text: string): Parsed {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { ok: false, code: 'malformed', message: 'A frame is a JSON object with a type' }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, code: 'malformed', message: 'A frame is a JSON object with a type' }
  const type = (value as { type?: unknown }).type
  const validate = typeof type === 'string' ? validators.get(type) : undefined
  if (!validate) return { ok: false, code: 'unknown_type', message: `Unknown frame type; known: ${[...validators.keys()].join(', ')}` }
  if (!validate(value)) {
    const err = validate.errors?.[0]
    if (err?.keyword === 'maxLength' && err.instancePath === '/sdp')
      return { ok: false, code: 'too_large', message: `The SDP is over ${MAX_SDP_BYTES} bytes` }
    return {
      ok: false,
      code: 'malformed',
      message: `Bad ${type} frame: ${err ? `${err.instancePath || 'frame'} ${err.message}` : 'invalid'}`,
    }
  }
  return { ok: true, frame: value as ClientFrame }
}
