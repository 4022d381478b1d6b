/**
 * Calls in the app: the call itself runs on the call page (/call, served by Tern: media, the
 * signaling socket, WebRTC), which the app opens — `?to=<user>&start=1` to call someone,
 * `?answer=<call>` to pick up. The app rings: a `call.incoming` for me shows a banner with Answer
 * and Decline until the call is answered or ends, on any of my devices.
 */
import { signal } from '@preact/signals'
import type { GatewayFrames } from '@tern/client'
import { api, ok } from './api'

export type Call = GatewayFrames['call.incoming']['data']['call']

/** the call ringing on this device, or null */
export const ringing = signal<Call | null>(null)

export function callArrived(type: 'call.incoming' | 'call.answered' | 'call.ended', call: Call, myId: number | undefined) {
  if (type === 'call.incoming') {
    if (call.receiver_id === myId && call.status === 'ringing') ringing.value = call
    return
  }
  // answered (here or on another device) or over: stop ringing
  if (ringing.value?.call_id === call.call_id) ringing.value = null
}

export const callPageFor = (userId: number, audio = false) => `/call?to=${userId}&start=1${audio ? '&audio=1' : ''}`
export const answerPageFor = (callId: number) => `/call?answer=${callId}`

export async function decline(call: Call) {
  ringing.value = null
  await ok(api.POST('/api.v2/api/calls/{id}/end', { params: { path: { id: call.call_id } } }))
}
