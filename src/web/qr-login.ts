/** GET /qr/<token>: the page of a QR login code (auth/qr-login.ts) — the code to scan, and what to do. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppContext } from '../context.js'
import { escapeHtml } from '../lib/html.js'
import { codePage } from '../modules/auth/index.js'
import { page } from './layout.js'

export const qrLoginPage: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/qr/:token',
    {
      schema: {
        summary: 'The page of a QR login code: the code to scan, and instructions',
        tags: ['auth'],
        params: Type.Object({ token: Type.String({ maxLength: 256 }) }),
        // an unknown, used or expired code is a 404 page (text/html)
        response: { 200: { description: 'The page', content: { 'text/html': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const code = await codePage(ctx, request.params.token)
      let status = 200
      let body: string
      if (code) {
        const state =
          code.status === 'pending'
            ? 'Waiting for a signed-in device to scan it.'
            : code.status === 'scanned'
              ? 'Scanned: approve the sign-in on the device that scanned it.'
              : 'Approved: the new device is signing in.'
        body = `<h1>Sign in with a QR code</h1>
<p>On a phone or computer where you are signed in to Tern, open <b>Devices → Link a device</b> and scan this code.
You will see which device asks; approve it, and this device signs in.</p>
<figure>${code.svg}</figure>
<p class="muted">${escapeHtml(state)} The code works once, until ${escapeHtml(code.expiresAt)} (2 minutes).</p>
<p class="muted">Did you open this page by scanning the code with a camera? Scan it from the Tern app instead: only a signed-in Tern app can approve a sign-in.
Never scan a code someone else sends you: approving it signs <em>them</em> in to your account.</p>`
      } else {
        status = 404
        body =
          '<h1>This code does not work</h1><p class="muted">It is unknown, was used already, or is more than 2 minutes old. Show a new one on the device that wants to sign in.</p>'
      }
      return reply
        .code(status as 200)
        .header('cache-control', 'no-store')
        .header('x-robots-tag', 'noindex')
        .type('text/html; charset=utf-8')
        .send(page('Sign in with a QR code · Tern', body))
    },
  )
}
