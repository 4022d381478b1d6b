/** The events of polls. */
import { Type } from 'typebox'
import { defineEvents } from '../../events/define.js'
import { PollState } from './schemas.js'

export const pollEvents = defineEvents({
  'poll.updated': {
    payload: Type.Object({ poll: PollState }),
    routes: ['chat'],
    summary: "A poll's votes changed or it was closed: its results as they are now (without anyone's own votes).",
  },
})
