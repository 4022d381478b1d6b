import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import * as settings from './service.js'

const secured = { tags: ['settings'], security: [{ bearer: [] }] }

const SettingsView = Type.Object({ user_id: Type.Integer(), settings: Type.Record(Type.String(), Type.Unknown()) })
const UpdateBody = Type.Object(
  {
    key: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_.-]{0,63}$', errorMessage: 'key must be 1 to 64 letters, digits, _ . or -, starting with a letter' }),
    /** any JSON value; null resets the key */
    value: Type.Unknown(),
  },
  { additionalProperties: false, required: ['key', 'value'] },
)

export const settingsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.get('/settings', {
    schema: { summary: 'My settings (defaults filled in)', ...secured, response: { 200: okSchema(SettingsView) } },
  }, async (request) => ok(await settings.get(ctx, request.user)))

  app.post('/settings/update', {
    schema: { summary: 'Set one setting (null resets it)', ...secured, body: UpdateBody, response: { 200: okSchema(SettingsView) } },
  }, async (request) => ok(await settings.update(ctx, request.user, request.body.key, request.body.value)))
}
