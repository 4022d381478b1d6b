/**
 * How a module declares the events it produces: each module's `events.ts` lists its events with a
 * TypeBox schema of the payload (the `data` of the frame), where they are logged, and one line
 * saying what they mean. events/map.ts joins them into the one EventMap; the outbox takes only
 * names and payloads from it, and the AsyncAPI document is generated from it.
 */
import type { TSchema } from 'typebox'

/**
 * Where an event goes: `user` to some users' own update logs (their `seq`); `chat` to a chat's
 * members (a personal chat's two logs, or a group's or channel's own log with its `chat_seq`);
 * `ephemeral` live only, never logged or replayed (typing, presence).
 */
export type EventRoute = 'user' | 'chat' | 'ephemeral'

export interface EventDefinition<Payload extends TSchema = TSchema> {
  payload: Payload
  routes: readonly EventRoute[]
  summary: string
}

/** Keeps each definition's payload schema type (so payloads are checked per event name). */
export const defineEvents = <const Events extends Record<string, EventDefinition>>(events: Events) => events
