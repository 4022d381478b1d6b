import { Type, type Static } from 'typebox'
import { Nullable, Timestamp } from '../../http/schemas.js'
import { CallType } from './schemas.js'

export const RoomIdParams = Type.Object(
  { room_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', errorMessage: 'room_id is 1 to 64 of letters, digits, _ and -' }) },
  { additionalProperties: false },
)

export const CreateRoomBody = Type.Object({ call_type: Type.Optional(CallType) }, { additionalProperties: false })
export const JoinRoomBody = Type.Object({ audio_only: Type.Optional(Type.Boolean()) }, { additionalProperties: false })

/** The API's VideoCall. */
export const RoomView = Type.Object({
  id: Type.Integer(),
  room_id: Type.String(),
  creator_id: Type.Integer(),
  call_id: Nullable(Type.Integer({ description: 'the 1:1 call this is the room of' })),
  call_type: CallType,
  status: Type.Union([Type.Literal('active'), Type.Literal('ended')]),
  started_at: Timestamp,
  ended_at: Nullable(Timestamp),
  duration: Type.Integer({ description: 'seconds from start to end (0 while active)' }),
  participant_count: Type.Integer({ description: 'distinct users who joined' }),
})
export type RoomView = Static<typeof RoomView>

/** The API's VideoCallParticipant, with the username. */
export const ParticipantView = Type.Object({
  user_id: Type.Integer(),
  username: Type.String(),
  joined_at: Timestamp,
  left_at: Nullable(Timestamp),
  audio_only: Type.Boolean(),
  screensharing: Type.Boolean(),
  connected: Type.Boolean({ description: 'has a signaling socket in the room now' }),
})
export type ParticipantView = Static<typeof ParticipantView>

export const IceServer = Type.Object({
  urls: Type.Array(Type.String()),
  username: Type.Optional(Type.String()),
  credential: Type.Optional(Type.String()),
})
export const IceConfigView = Type.Object({
  ice_servers: Type.Array(IceServer, { description: 'RTCConfiguration.iceServers' }),
  ttl_seconds: Type.Integer({ description: 'seconds the TURN credentials are good for (0: none)' }),
})

/** What a client needs to enter a room's signaling: the ticket, where to present it, and the ICE servers. */
export const TicketView = Type.Object({
  room_id: Type.String(),
  ticket: Type.String({ description: 'present it in the join frame on the signaling socket before it expires' }),
  expires_at: Timestamp,
  signaling_url: Type.String({ description: 'the WebSocket URL of the video service' }),
  ice: IceConfigView,
  room: RoomView,
})
export type TicketView = Static<typeof TicketView>

export const RtcSettingsBody = Type.Object(
  {
    stun_server: Type.Optional(
      Nullable(Type.String({ pattern: '^[A-Za-z0-9.:\\[\\]-]{1,253}$', errorMessage: 'stun_server is a host name or address' })),
    ),
    stun_port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }))),
    turn_server: Type.Optional(
      Nullable(Type.String({ pattern: '^[A-Za-z0-9.:\\[\\]-]{1,253}$', errorMessage: 'turn_server is a host name or address' })),
    ),
    turn_port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }))),
    turn_username: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
    turn_credential: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export const RtcSettingsView = Type.Object({
  stun_server: Nullable(Type.String()),
  stun_port: Nullable(Type.Integer()),
  turn_server: Nullable(Type.String()),
  turn_port: Nullable(Type.Integer()),
  turn_username: Nullable(Type.String()),
  has_turn_credential: Type.Boolean(),
  enabled: Type.Boolean({ description: "true: these servers come first in the user's ICE configuration" }),
})

/** A report from the video service (POST /internal/video/events). */
export const VideoReport = Type.Object({
  event: Type.Union([Type.Literal('join'), Type.Literal('leave'), Type.Literal('media')]),
  room_id: RoomIdParams.properties.room_id,
  user_id: Type.Integer({ minimum: 1 }),
  session_id: Type.Optional(Type.Integer({ minimum: 1, description: "the session the socket's ticket was issued to" })),
  peer_id: Type.String({ maxLength: 64 }),
  at: Type.Integer(),
  audio_only: Type.Optional(Type.Boolean()),
  media: Type.Optional(Type.Object({ audio: Type.Boolean(), video: Type.Boolean(), screenshare: Type.Boolean() })),
})
export type VideoReport = Static<typeof VideoReport>
