/** The stickers module's public surface: what other modules may use. */
export { emojiUrl } from './catalogue.js'
export { requireUsable } from './service.js'
