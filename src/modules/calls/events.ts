/** The events of calls: both parties' devices hear them, logged in their update sequences. */
import { Type } from 'typebox'
import { defineEvents } from '../../events/define.js'
import { CallView } from './schemas.js'

const payload = Type.Object({ call: CallView })

export const callEvents = defineEvents({
  'call.incoming': {
    payload,
    routes: ['user'],
    summary: "A call started ringing: to the callee's devices (to ring) and the caller's (to show it).",
  },
  'call.answered': {
    payload,
    routes: ['user'],
    summary: "The callee answered: the call goes on; the callee's other devices stop ringing.",
  },
  'call.ended': {
    payload,
    routes: ['user'],
    summary: 'The call is over: ended after an answer, or missed (no answer in time), declined by the callee, cancelled by the caller.',
  },
})
