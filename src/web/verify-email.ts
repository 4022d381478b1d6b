/** GET /verify-email?token=: the page an email confirmation link opens (auth/email-verification.ts). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../context.js'
import { AppError } from '../http/errors.js'
import { escapeHtml } from '../lib/html.js'
import { verifyEmail, wasConfirmedBy } from '../modules/auth/index.js'
import { page } from './layout.js'

export const verifyEmailPage: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/verify-email',
    {
      schema: {
        summary: 'The page of an email confirmation link',
        tags: ['auth'],
        querystring: Type.Object({ token: Type.Optional(Type.String({ maxLength: 256 })) }),
        // a link that does not work is a 400 page too (text/html)
        response: { 200: { description: 'The page: the address is confirmed', content: { 'text/html': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const token = request.query.token ?? ''
      let status = 200
      let body: string
      try {
        const { email } = await verifyEmail(ctx, token)
        body = `<h1>Email confirmed</h1><p>${escapeHtml(email)} is confirmed for your Tern account. You can close this page.</p>`
      } catch (error) {
        if (!(error instanceof AppError)) throw error
        if (await wasConfirmedBy(ctx, token)) {
          body = '<h1>Email confirmed</h1><p>This link was used already, and the address is confirmed. You can close this page.</p>'
        } else {
          status = 400
          body =
            '<h1>This link does not work</h1><p class="muted">It is incomplete, was used already, or is more than 24 hours old. Ask for a new one in the app.</p>'
        }
      }
      // 400 is left out of the schema: the document describes 400 as the JSON envelope of a bad query
      return reply
        .code(status as 200)
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(page('Confirm your email · Tern', body))
    },
  )
}
