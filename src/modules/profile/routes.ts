import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../../context.js'
import { requireUser } from '../../http/auth.js'
import { ok, okSchema } from '../../http/envelope.js'
import { notFound } from '../../http/errors.js'
import { findPreloaded } from '../users/index.js'
import { PreloadedAvatarView, PrivacyUpdate, PrivacyView, ProfileParams, ProfileUpdate, ProfileView } from './schemas.js'
import * as profile from './service.js'

const secured = { tags: ['profile'], security: [{ bearer: [] }] }

/** V2/profile/*, V2/privacy and V2/avatars/preloaded. */
export const profileRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  await app.register(async (scope) => {
    const signedIn = scope.withTypeProvider<TypeBoxTypeProvider>()
    signedIn.addHook('preValidation', requireUser(ctx))

    signedIn.get(
      '/avatars/preloaded',
      {
        schema: {
          summary: 'The avatars shipped with Tern (pick one in profile/update)',
          ...secured,
          response: { 200: okSchema(Type.Object({ items: Type.Array(PreloadedAvatarView) })) },
        },
      },
      async () => ok({ items: profile.preloadedAvatars() }),
    )

    signedIn.get(
      '/profile/:username',
      {
        schema: {
          summary: "A user's profile, as their privacy lets me see it",
          ...secured,
          params: ProfileParams,
          response: { 200: okSchema(ProfileView) },
        },
      },
      async (request) => ok(await profile.view(ctx, request.user, request.params.username)),
    )

    signedIn.post(
      '/profile/update',
      {
        schema: {
          summary: 'Change my profile (any of its fields)',
          ...secured,
          body: ProfileUpdate,
          response: { 200: okSchema(ProfileView) },
        },
      },
      async (request) => ok(await profile.update(ctx, request.user, request.body)),
    )

    signedIn.get(
      '/privacy',
      {
        schema: { summary: 'Who sees my last seen, phone and avatar', ...secured, response: { 200: okSchema(PrivacyView) } },
      },
      async (request) => ok(profile.privacyOf(request.user)),
    )

    signedIn.post(
      '/privacy/update',
      {
        schema: {
          summary: 'Change who sees my last seen, phone or avatar',
          ...secured,
          body: PrivacyUpdate,
          response: { 200: okSchema(PrivacyView) },
        },
      },
      async (request) => ok(await profile.updatePrivacy(ctx, request.user, request.body)),
    )
  })
}

/** The preloaded avatar images (public: an <img> sends no token). */
export const avatarImageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/avatars/preloaded/:file',
    { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 80 }) }) } },
    async (request, reply) => {
      const { file } = request.params
      const avatar = file.endsWith('.svg') ? findPreloaded(file.slice(0, -'.svg'.length)) : undefined
      if (!avatar) throw notFound('No such avatar')
      return reply
        .header('Content-Type', 'image/svg+xml')
        .header('Cache-Control', 'public, max-age=604800, immutable')
        .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
        .send(avatar.svg)
    },
  )
}
