/** The bots module's public surface: what other modules may use. */
export { retireBotsOf } from './service.js'
export { onMessageForBots, supersedePoll, wakePolls } from './updates.js'
