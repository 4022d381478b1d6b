/**
 * In-process listeners for committed events: where bots, push and webhooks hook in. A listener
 * hears an event only after the transaction that produced it committed, on the instance that
 * produced it, once; it runs after the frames were handed to the fan-out and cannot delay or fail
 * the request (a throw or a rejected promise is logged).
 */
import type { Logger } from 'pino'
import type { EventName, EventPayload } from './map.js'

/** Who an event was for: a chat's members, or some users' own devices. */
export type Audience = { chatId: number } | { userIds: readonly number[] }

export type CommittedEvent<Name extends EventName = EventName> = {
  [N in Name]: { name: N; payload: EventPayload<N>; to: Audience; at: number }
}[Name]

type Listener<Name extends EventName> = (event: CommittedEvent<Name>) => void | Promise<void>

export class EventBus {
  private readonly listeners = new Map<EventName, Listener<EventName>[]>()

  constructor(private readonly log: Logger) {}

  /** Calls `listener` for each committed event of this name; returns a function that removes it. */
  on<Name extends EventName>(name: Name, listener: Listener<Name>): () => void {
    const list = this.listeners.get(name) ?? []
    list.push(listener as Listener<EventName>)
    this.listeners.set(name, list)
    return () => {
      const index = list.indexOf(listener as Listener<EventName>)
      if (index >= 0) list.splice(index, 1)
    }
  }

  /** Whether anyone listens to this event (a hot path may then skip building it). */
  listens(name: EventName): boolean {
    return (this.listeners.get(name)?.length ?? 0) > 0
  }

  emit(events: readonly CommittedEvent[]) {
    if (this.listeners.size === 0) return
    for (const event of events) {
      for (const listener of this.listeners.get(event.name) ?? []) {
        try {
          const result = listener(event)
          if (result) result.catch((err: unknown) => this.log.warn({ err, event: event.name }, 'event listener failed'))
        } catch (err) {
          this.log.warn({ err, event: event.name }, 'event listener failed')
        }
      }
    }
  }
}
