/**
 * Who blocked whom: the reads other modules ask (messages, chats, presence, communities). The
 * changes (block, unblock) and the blocked list are in actions.ts.
 */
import * as repo from './repo.js'

/** Whether `userId` has blocked `otherId`. */
export const hasBlocked = repo.hasBlocked
/** Everyone `userId` blocked or was blocked by. */
export const blockedEitherWay = repo.blockedEitherWay
