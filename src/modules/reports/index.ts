/** The reports module's public surface: what other modules may use. */
export { act, close, queue } from './moderation.js'
export type { ReportAction } from './moderation.js'
