/**
 * Every reaction to what happened, registered in one place at start-up (buildApp calls
 * registerReactions before any route is mounted): the listeners of committed events (events/bus.ts)
 * and the subscribers of control messages (events/control.ts). No other file registers one
 * (test/structure/reactions.test.ts checks it): a module exports what a reaction does, this file
 * says when it runs. The work queue's own wake-up is wired beside its runner (jobs/index.ts).
 */
import type { AppContext } from '../context.js'
import type { Audience } from './bus.js'
import { onMessageForBots, supersedePoll, wakePolls } from '../modules/bots/index.js'
import { presenceOf } from '../modules/presence/index.js'
import { preparePush, queueForCall, queueForNewMessage } from '../modules/push/index.js'
import { closeSocketsHere } from '../realtime/gateway.js'
import { MESSAGE_INDEX_DELAY_MS } from '../jobs/index.js'

export function registerReactions(ctx: AppContext) {
  // push: a new message or a ringing call queues a notification for members with no live socket
  preparePush(ctx)
  ctx.events.on('message.new', (event) => queueForNewMessage(ctx, event.payload.message, event.at))
  ctx.events.on('call.incoming', (event) => queueForCall(ctx, event.payload.call, event.at))

  // bots: a message to a bot (or a command or reply to one in a group) becomes an update
  ctx.events.on('message.new', (event) => onMessageForBots(ctx, event.payload.message))
  // a long poll anywhere is woken by a new update, and ended by a newer getUpdates of its bot
  ctx.control.on('bot.update', ({ botId }) => wakePolls(ctx, botId))
  ctx.control.on('bot.poll', (poll) => supersedePoll(ctx, poll))

  // presence: someone added to (or removed from) my contacts may now see (or no longer see) my last seen
  const reannounceTo = async (to: Audience, contactId: number) => {
    if ('userIds' in to) for (const owner of to.userIds) await presenceOf(ctx).reannounce(owner, [contactId])
  }
  ctx.events.on('contact.added', (event) => reannounceTo(event.to, event.payload.contact.user_id))
  ctx.events.on('contact.removed', (event) => reannounceTo(event.to, event.payload.user_id))

  // jobs that run when due: a call that starts ringing times out; new messages are indexed for search (SQLite)
  ctx.events.on('call.incoming', (event) =>
    ctx.control.publish('jobs.due', { job: 'call-timeouts', at: event.at + ctx.config.callRingTimeoutSeconds * 1000 }),
  )
  if (ctx.messageIndex) {
    // the index is this instance's own: the wake stays here
    const indexSoon = (event: { at: number }) =>
      ctx.control.publishHere('jobs.due', { job: 'message-search-index', at: event.at + MESSAGE_INDEX_DELAY_MS })
    ctx.events.on('message.new', indexSoon)
    ctx.events.on('message.edited', indexSoon)
    ctx.events.on('message.deleted', indexSoon)
  }

  // sessions: a revoked session or a ban closes the user's sockets on whichever instance holds them
  ctx.control.on('sockets.close', (target) => closeSocketsHere(ctx, target))
}
