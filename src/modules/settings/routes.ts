import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import * as settings from './service.js'
import { SettingsView, UpdateBody } from './schemas.js'

const secured = { tags: ['settings'], security: [{ bearer: [] }] }

export const settingsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.get(
    '/settings',
    {
      schema: { summary: 'My settings (defaults filled in)', ...secured, response: { 200: okSchema(SettingsView) } },
    },
    async (request) => ok(await settings.get(ctx, request.user)),
  )

  app.post(
    '/settings/update',
    {
      schema: { summary: 'Set one setting (null resets it)', ...secured, body: UpdateBody, response: { 200: okSchema(SettingsView) } },
    },
    async (request) => ok(await settings.update(ctx, request.user, request.body.key, request.body.value)),
  )
}
