/**
 * Wires the realtime gateway (transport, src/realtime/) to the modules: sessions say who a token
 * is, messages render what the update log refers to and record delivery receipts, presence keeps
 * the online state.
 */
import type { FastifyInstance } from 'fastify'
import type { AppContext } from '../../context.js'
import { registerGateway } from '../../realtime/gateway.js'
import { DeliveryMarks } from '../messages/delivered.js'
import { presentByIds } from '../messages/views.js'
import { presenceOf } from '../presence/service.js'
import { authenticate } from '../sessions/service.js'

export async function mountGateway(app: FastifyInstance, ctx: AppContext, prefixes: readonly string[]) {
  await registerGateway(app, ctx, prefixes, {
    authenticate: async (token) => {
      const found = await authenticate(ctx, token)
      return found ? { userId: found.user.id, sessionId: found.sessionId } : null
    },
    renderMessages: presentByIds,
    presence: presenceOf(ctx),
    deliveries: new DeliveryMarks(ctx),
  })
}
