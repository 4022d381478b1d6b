/**
 * The EventMap: every event Tern produces, by name, with its payload schema. Each module's
 * `events.ts` contributes its own; a new module adds its map here.
 */
import type { Static } from 'typebox'
import { botEvents } from '../modules/bots/events.js'
import { callEvents } from '../modules/calls/events.js'
import { chatEvents } from '../modules/chats/events.js'
import { contactEvents } from '../modules/contacts/events.js'
import { messageEvents } from '../modules/messages/events.js'
import { pollEvents } from '../modules/polls/events.js'
import { storyEvents } from '../modules/stories/events.js'
import { userEvents } from '../modules/users/events.js'

export const EVENTS = {
  ...messageEvents,
  ...chatEvents,
  ...userEvents,
  ...storyEvents,
  ...pollEvents,
  ...contactEvents,
  ...callEvents,
  ...botEvents,
}

export type EventMap = typeof EVENTS
export type EventName = keyof EventMap
export type EventPayload<Name extends EventName> = Static<EventMap[Name]['payload']>
/** the events that are written to an update log (and so replayed to a device that was away) */
export type LoggedEventName = { [Name in EventName]: EventMap[Name]['routes'] extends readonly ['ephemeral'] ? never : Name }[EventName]
