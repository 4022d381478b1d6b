/** The messages module's public surface: what other modules may use. */
export { edit, eraseForAll, remove, typing } from './actions.js'
export { DeliveryMarks } from './delivered.js'
export { formatSize } from './present.js'
export { MAX_CONTENT, MessageView, SendMessageBody } from './schemas.js'
export {
  messageRow,
  moderatedMessage,
  postFromPlatform,
  postIn,
  presentOne,
  readableMessage,
  send,
  textDraft,
  visibleMessage,
} from './service.js'
export { MESSAGE_REQUESTS } from './socket.js'
export type { Caller } from './socket.js'
export { presentByIds, presentRows } from './views.js'
