/**
 * The main service's calls to the video service (VIDEO_URL): each bounded by VIDEO_TIMEOUT_MS
 * (5 s). A video service that is down, refuses or never answers is a 504 `upstream_timeout`,
 * never a hang and never a 500; nothing else in the main service waits on it.
 */
import type { AppContext } from '../../context.js'
import { AppError } from '../../http/errors.js'
import { CONFIGURED, outboundFetcher } from '../../lib/outbound-http.js'
import { videoSecret } from '../../video/secret.js'
import { signBody, SIGNATURE_HEADER } from '../../video/ticket.js'

/** the video service is the operator's (VIDEO_URL): reached through the one outgoing client, no redirect followed */
const videoFetch = outboundFetcher(CONFIGURED)

export const upstreamTimeout = (message: string) => new AppError(504, 'upstream_timeout', message)

/** Where the main service reaches the video service. */
export function videoBaseUrl(ctx: AppContext): string {
  return ctx.config.videoUrl ?? `http://127.0.0.1:${ctx.config.videoPort}`
}

/** The signaling socket's URL as clients reach it. */
export function signalingUrl(ctx: AppContext): string {
  if (ctx.config.videoPublicUrl) return ctx.config.videoPublicUrl
  const url = new URL(videoBaseUrl(ctx))
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/signal`
  return url.toString()
}

/** GET a JSON document from the video service; 504 when it cannot be had in time. */
export async function videoGet(
  ctx: AppContext,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const timeoutMs = ctx.config.videoTimeoutMs
  try {
    const res = await videoFetch(`${videoBaseUrl(ctx)}${path}`, { headers, signal: AbortSignal.timeout(timeoutMs) })
    const text = await res.text()
    if (res.status >= 500) throw upstreamTimeout(`The video service failed (${res.status})`)
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      throw upstreamTimeout('The video service answered something that is not JSON')
    }
    return { status: res.status, body }
  } catch (error) {
    if (error instanceof AppError) throw error
    const name = (error as Error)?.name
    ctx.log.warn({ err: error }, 'video service call failed')
    throw upstreamTimeout(
      name === 'TimeoutError' ? `The video service did not answer in ${timeoutMs} ms` : 'The video service is unreachable',
    )
  }
}

/**
 * Tells the video service that `userId` left `roomId` over HTTP, so their signaling sockets in it
 * are closed (the others get peer-left). Bounded by VIDEO_TIMEOUT_MS; a video service that is down
 * or silent is logged and answered false, never an error: the leave is recorded whatever happens.
 */
export function dropFromRoom(ctx: AppContext, roomId: string, userId: number): Promise<boolean> {
  return postSigned(
    ctx,
    '/internal/rooms/kick',
    { room_id: roomId, user_id: userId, at: ctx.clock.now() },
    {
      refused: 'video service refused to drop a leaving user',
      unreachable: "video service unreachable: a leaving user's sockets stay until they close",
    },
  )
}

/**
 * POSTs a request signed with the video secret to the video service, bounded by VIDEO_TIMEOUT_MS;
 * answers whether it was taken. A refusal or a video service that is down or silent is logged
 * with `say`, never thrown.
 */
async function postSigned(
  ctx: AppContext,
  path: string,
  payload: Record<string, unknown>,
  say: { refused: string; unreachable: string },
): Promise<boolean> {
  const body = JSON.stringify(payload)
  try {
    const res = await videoFetch(`${videoBaseUrl(ctx)}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(videoSecret(ctx.config), body) },
      body,
      signal: AbortSignal.timeout(ctx.config.videoTimeoutMs),
    })
    await res.arrayBuffer().catch(() => undefined)
    if (!res.ok) ctx.log.warn({ status: res.status }, say.refused)
    return res.ok
  } catch (error) {
    ctx.log.warn({ err: error }, say.unreachable)
    return false
  }
}

/**
 * Tells the video service that a session of `userId` ended (without `sessionId`: every session of
 * theirs, a ban), so the signaling sockets it opened close on every video instance (they share
 * Redis) and its tickets are refused from now on. Call it after the end committed. Bounded by
 * VIDEO_TIMEOUT_MS; a video service that is down or silent is logged, never an error (its reports
 * from such a socket are refused all the same: reportFromVideo).
 */
export function endVideoSessions(
  ctx: AppContext,
  userId: number,
  sessionId: number | undefined,
  why: { code: number; reason: string },
): Promise<boolean> {
  const now = ctx.clock.now()
  return postSigned(
    ctx,
    '/internal/sessions/end',
    {
      user_id: userId,
      ...(sessionId === undefined ? {} : { session_id: sessionId }),
      // every ticket issued until now expires by then
      tickets_until: now + ctx.config.videoTicketTtlSeconds * 1000,
      code: why.code,
      reason: why.reason,
      at: now,
    },
    {
      refused: "video service refused to end a session's sockets",
      unreachable: "video service unreachable: an ended session's signaling sockets stay until their next report",
    },
  )
}
