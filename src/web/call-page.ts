/**
 * GET /call: a small call page (docs/calls.md, "The call page"), the first piece of calls in the
 * web client. Signed in with the `tern_session` cookie it calls a user (V2/calls/start), rings on
 * call.incoming from the gateway, answers, joins video rooms, and does the WebRTC offer/answer/ICE
 * through the video service's signaling socket with the ticket the API hands out. Its script is
 * /pages/call.js (web/call-script.ts): nothing inline, so the CSP is the pages' one, with the
 * signaling service's origin added to connect-src (it listens on its own port).
 */
import type { FastifyPluginAsync } from 'fastify'
import type { AppContext } from '../context.js'
import { signalingUrl } from '../modules/calls/index.js'
import { html } from './admin/markup.js'
import { CALL_JS } from './call-script.js'
import { cookieUser, loginTo, sendPage, siteHeaders, sitePage } from './site.js'

export const CALL_PATH = '/call'

/** The pages' CSP, with the signaling socket's origin allowed for connections. */
export function callPageHeaders(ctx: AppContext): Record<string, string> {
  const headers = siteHeaders(ctx.config.publicBaseUrl)
  let signaling = ''
  try {
    signaling = new URL(signalingUrl(ctx)).origin
  } catch {
    // a signaling URL that does not parse adds nothing: the page then cannot connect, and says so
  }
  const csp = headers['content-security-policy']
    .split('; ')
    .map((part) => (part === "connect-src 'self'" && signaling ? `connect-src 'self' ${signaling}` : part))
  csp.push("media-src 'self' blob:")
  return { ...headers, 'content-security-policy': csp.join('; ') }
}

const body = html`<section id="call" class="call" aria-label="Calls">
<p id="call-status" role="status">Connecting…</p>
<div class="columns">
<form id="call-start" class="stack">
<label>User id to call <input type="text" name="receiver_id" inputmode="numeric" autocomplete="off" required></label>
<p><input type="checkbox" id="call-audio-only" name="audio_only"> <label for="call-audio-only" class="muted">Audio only</label></p>
<button type="submit">Call</button>
</form>
<form id="room-join" class="stack">
<label>Room id <input type="text" name="room_id" autocomplete="off" required></label>
<button type="submit">Join room</button>
<button type="button" id="room-create">New room</button>
</form>
</div>
<div id="call-incoming" class="card" hidden>
<p class="incoming-text"></p>
<button type="button" id="call-answer">Answer</button>
<button type="button" id="call-decline">Decline</button>
</div>
<p><button type="button" id="call-hangup" hidden>Hang up</button></p>
<div id="call-videos" class="videos">
<figure><video id="call-local" autoplay playsinline muted></video><figcaption>You</figcaption></figure>
</div>
<h2>Log</h2>
<ol id="call-log" class="muted"></ol>
<p><a href="/app">Back to your chats</a></p>
</section>`

export const callPage: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get('/pages/call.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('text/javascript; charset=utf-8').send(CALL_JS),
  )

  app.get(CALL_PATH, { schema: { hide: true } }, async (request, reply) => {
    reply.headers(callPageHeaders(ctx))
    const found = await cookieUser(ctx, request)
    if (!found) return reply.redirect(loginTo(CALL_PATH), 303)
    return sendPage(reply, sitePage('Call', body, { scripts: ['/pages/call.js'], signedInAs: found.user.username }))
  })
}
