/** The AsyncAPI 3.0 document of the signaling socket, generated from the frame schemas (video/protocol.ts). */
import { jsonSchema } from '../events/asyncapi.js'
import { VERSION } from '../version.js'
import { CLIENT_FRAMES, SERVER_FRAMES, type FrameDoc } from './protocol.js'

export function videoAsyncApi() {
  const messages: Record<string, unknown> = {}
  const add = (prefix: string, frames: Record<string, FrameDoc>) =>
    Object.entries(frames).map(([name, doc]) => {
      messages[`${prefix}.${name}`] = { name, title: name, summary: doc.summary, payload: jsonSchema(doc.frame) }
      return `${prefix}.${name}`
    })
  const sent = add('client', CLIENT_FRAMES)
  const received = add('server', SERVER_FRAMES)
  const channelRef = { $ref: '#/channels/signal' }
  const refs = (names: string[]) => names.map((name) => ({ $ref: `#/channels/signal/messages/${name}` }))
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Tern video signaling',
      version: VERSION,
      description:
        'The signaling socket of the video service (VIDEO_PORT, default 5001): WebRTC offers, answers and ICE candidates between the peers of a room, ' +
        'and who is in it. The first frame is join with a room ticket from the main service. See docs/calls.md.',
      license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
    },
    defaultContentType: 'application/json',
    channels: {
      signal: {
        address: '/signal',
        title: 'The signaling socket',
        messages: Object.fromEntries(Object.keys(messages).map((name) => [name, { $ref: `#/components/messages/${name}` }])),
      },
    },
    operations: {
      receiveSignals: { action: 'receive', channel: channelRef, summary: 'Frames from the server.', messages: refs(received) },
      sendSignals: { action: 'send', channel: channelRef, summary: 'Frames a client sends.', messages: refs(sent) },
    },
    components: { messages },
  }
}
