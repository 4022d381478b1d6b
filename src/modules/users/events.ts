/** The events of users. */
import { Type } from 'typebox'
import { defineEvents } from '../../events/define.js'
import { Nullable, Timestamp } from '../../http/schemas.js'

export const Presence = Type.Object({ user_id: Type.Integer(), is_online: Type.Boolean(), last_seen: Nullable(Timestamp) })

export const userEvents = defineEvents({
  presence: {
    payload: Presence,
    routes: ['ephemeral'],
    summary: 'A personal-chat peer came online or went offline (hidden both ways between users who blocked each other).',
  },
})
