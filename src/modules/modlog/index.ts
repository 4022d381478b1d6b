/** The modlog module's public surface: what other modules may use. */
export { listModLog, recordModeration } from './service.js'
