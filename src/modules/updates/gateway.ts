/**
 * Wires the realtime gateway (transport, src/realtime/) to the modules: sessions say who a token
 * is, messages render what the update log refers to and record delivery receipts, presence keeps
 * the online state.
 */
import type { FastifyInstance } from 'fastify'
import type { AppContext } from '../../context.js'
import type { Audience } from '../../events/bus.js'
import { registerGateway } from '../../realtime/gateway.js'
import { DeliveryMarks } from '../messages/delivered.js'
import { presentByIds } from '../messages/views.js'
import { presenceOf } from '../presence/service.js'
import { authenticate } from '../sessions/service.js'

export async function mountGateway(app: FastifyInstance, ctx: AppContext, prefixes: readonly string[]) {
  const presence = presenceOf(ctx)
  // someone added to (or removed from) my contacts may now see (or no longer see) my last seen
  ctx.events.on('contact.added', (event) => reannounceTo(event.to, event.payload.contact.user_id))
  ctx.events.on('contact.removed', (event) => reannounceTo(event.to, event.payload.user_id))
  const reannounceTo = async (to: Audience, contactId: number) => {
    if ('userIds' in to) for (const owner of to.userIds) await presence.reannounce(owner, [contactId])
  }
  await registerGateway(app, ctx, prefixes, {
    authenticate: async (token) => {
      const found = await authenticate(ctx, token)
      return found ? { userId: found.user.id, sessionId: found.sessionId } : null
    },
    renderMessages: presentByIds,
    presence,
    deliveries: new DeliveryMarks(ctx),
  })
}
