/**
 * The main service's calls to the video service (VIDEO_URL): each bounded by VIDEO_TIMEOUT_MS
 * (5 s). A video service that is down, refuses or never answers is a 504 `upstream_timeout`,
 * never a hang and never a 500; nothing else in the main service waits on it.
 */
import type { AppContext } from '../../context.js'
import { AppError } from '../../http/errors.js'

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
export async function videoGet(ctx: AppContext, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const timeoutMs = ctx.config.videoTimeoutMs
  try {
    const res = await fetch(`${videoBaseUrl(ctx)}${path}`, { headers, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' })
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
    throw upstreamTimeout(name === 'TimeoutError' ? `The video service did not answer in ${timeoutMs} ms` : 'The video service is unreachable')
  }
}
