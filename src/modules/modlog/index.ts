/** The moderation log's public surface. */
export { listModLog, recordModeration } from './service.js'
export type { ModLogFilter } from './repo.js'
