/**
 * The machine-readable description of the WebSocket protocol (AsyncAPI 3.0, served at
 * /asyncapi.json), generated from the EventMap and the gateway's own frames, so it cannot drift
 * from the schemas the code is typed by.
 */
import { Type, type TSchema } from 'typebox'
import { ackFrame, CLIENT_FRAMES, requestFrame, SERVER_FRAMES, type RequestSpec } from '../realtime/protocol.js'
import { EVENTS } from './map.js'
import type { EventRoute } from './define.js'

const FRAME_PLACES: Record<EventRoute, string> = {
  user: "in a user's own log: {type, seq, data}",
  chat: "of a chat: {type, seq, data} in a personal chat; {type, chat_id, chat_seq, data} in a group's or channel's log",
  ephemeral: 'ephemeral, never logged: {type, data} ({type, chat_id, data} to a group)',
}

/** The frame an event travels in: its type, its place in a log, and the event's payload as `data`. */
function eventFrame(name: string, payload: TSchema, routes: readonly EventRoute[]): TSchema {
  const logged = !routes.includes('ephemeral')
  return Type.Object({
    type: Type.Literal(name),
    ...(logged ? { seq: Type.Optional(Type.Integer({ minimum: 1, description: "the user's update seq" })) } : {}),
    chat_id: Type.Optional(Type.Integer({ description: 'the group or channel (with chat_seq: a place in its own log)' })),
    ...(logged ? { chat_seq: Type.Optional(Type.Integer({ minimum: 1 })) } : {}),
    data: payload,
  })
}

/**
 * A TypeBox schema as plain JSON Schema: symbols dropped, and OpenAPI 3.0's `nullable` (how the
 * HTTP schemas say "or null", see http/schemas.ts) spelled as JSON Schema does.
 */
export function jsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchema)
  if (typeof schema !== 'object' || schema === null) return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) if (key !== 'nullable') out[key] = jsonSchema(value)
  if ((schema as { nullable?: unknown }).nullable !== true) return out
  if (typeof out.type === 'string') return { ...out, type: [out.type, 'null'] }
  return { anyOf: [out, { type: 'null' }] }
}

export function asyncApiDocument(options: {
  version: string
  publicBaseUrl: string
  path: string
  requests: ReadonlyMap<string, RequestSpec<never>>
}) {
  const base = new URL(options.publicBaseUrl)
  const messages: Record<string, unknown> = {}
  const ref = (name: string) => ({ $ref: `#/components/messages/${name}` })
  const received: string[] = []
  const sent: string[] = []
  for (const [name, event] of Object.entries(EVENTS)) {
    messages[name] = {
      name,
      title: name,
      summary: event.summary,
      description: `Event, ${event.routes.map((route) => FRAME_PLACES[route]).join('; or ')}.`,
      payload: jsonSchema(eventFrame(name, event.payload, event.routes)),
    }
    received.push(name)
  }
  for (const [name, frame] of Object.entries(SERVER_FRAMES)) {
    messages[name] = { name, title: name, summary: frame.summary, payload: jsonSchema(frame.frame) }
    received.push(name)
  }
  const answers = [...options.requests.values()].map((spec) => spec.answer)
  messages.ack = {
    name: 'ack',
    title: 'ack',
    summary: 'The answer to a request (same id): what its HTTP twin answers as data. A write is acknowledged once committed.',
    payload: jsonSchema(ackFrame(answers)),
  }
  received.push('ack')
  for (const [name, frame] of Object.entries(CLIENT_FRAMES)) {
    messages[`client.${name}`] = { name, title: name, summary: frame.summary, payload: jsonSchema(frame.frame) }
    sent.push(`client.${name}`)
  }
  for (const [name, spec] of options.requests) {
    messages[`request.${name}`] = {
      name,
      title: name,
      summary: spec.summary,
      description: `A request: answered by ack or error with the same id. The same rules, errors and events as ${spec.twin}, whose body (with the message id in it) is data.`,
      payload: jsonSchema(requestFrame(name, spec.data)),
    }
    sent.push(`request.${name}`)
  }
  const channelMessages = Object.fromEntries(Object.keys(messages).map((name) => [name, ref(name)]))
  const channelRef = { $ref: '#/channels/gateway' }
  const messageRefs = (names: string[]) => names.map((name) => ({ $ref: `#/channels/gateway/messages/${name}` }))
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Tern realtime gateway',
      version: options.version,
      description:
        "Tern's WebSocket protocol: a socket delivers the user's update log and the logs of their groups and channels live, " +
        'each update once and in order; a client that was away resumes from where it stood. See docs/realtime.md.',
      license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
    },
    defaultContentType: 'application/json',
    servers: {
      tern: {
        host: base.host,
        protocol: base.protocol === 'https:' ? 'wss' : 'ws',
        description: 'PUBLIC_BASE_URL',
        security: [{ $ref: '#/components/securitySchemes/token' }],
      },
    },
    channels: {
      gateway: {
        address: options.path,
        title: 'The gateway socket',
        description:
          'Authenticated by the session token (Authorization: Bearer, or ?token= where a browser cannot set headers), or by the web session cookie from a page of this origin (Origin checked).',
        messages: channelMessages,
      },
    },
    operations: {
      receiveUpdates: {
        action: 'receive',
        channel: channelRef,
        summary: 'Events and control frames from the server.',
        messages: messageRefs(received),
      },
      sendFrames: { action: 'send', channel: channelRef, summary: 'Frames a client sends.', messages: messageRefs(sent) },
    },
    components: {
      messages,
      securitySchemes: { token: { type: 'httpApiKey', name: 'Authorization', in: 'header', description: 'Bearer <session token>' } },
    },
  }
}
