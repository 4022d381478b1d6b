import { Type, type Static } from 'typebox'
import { Id, Nullable, Peer, Timestamp } from '../../http/schemas.js'

export const CallType = Type.Union([Type.Literal('audio'), Type.Literal('video')], { errorMessage: 'call_type must be audio or video' })
export const CallStatus = Type.Union([
  Type.Literal('ringing'),
  Type.Literal('answered'),
  Type.Literal('ended'),
  Type.Literal('missed'),
  Type.Literal('declined'),
  Type.Literal('cancelled'),
])

export const StartCallBody = Type.Object({ receiver_id: Id, call_type: Type.Optional(CallType) }, { additionalProperties: false })

/** A call as both parties see it. */
export const CallView = Type.Object({
  call_id: Type.Integer(),
  caller_id: Type.Integer(),
  receiver_id: Type.Integer(),
  call_type: CallType,
  status: CallStatus,
  caller: Peer,
  receiver: Peer,
  created_at: Timestamp,
  answered_at: Nullable(Timestamp),
  ended_at: Nullable(Timestamp),
  duration_seconds: Type.Integer(),
})
export type CallView = Static<typeof CallView>

/** The API's call history item. */
export const CallHistoryItem = Type.Object({
  call_id: Type.Integer(),
  call_type: CallType,
  peer: Type.Object({ user_id: Type.Integer(), username: Type.String(), avatar_url: Nullable(Type.String()) }),
  direction: Type.Union([Type.Literal('outgoing'), Type.Literal('incoming')]),
  status: CallStatus,
  duration_seconds: Type.Integer(),
  created_at: Timestamp,
  ended_at: Nullable(Timestamp),
})
export type CallHistoryItem = Static<typeof CallHistoryItem>
