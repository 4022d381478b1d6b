/**
 * Rooms over HTTP (V2/calls/rooms…, V2/calls/{id}/ticket, V2/calls/rtc-settings), and the
 * main service's side of the video service: the ICE configuration proxied at
 * /video/integration/config, and the signed endpoint the video service reports to.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AddressInfo } from 'node:net'
import type { AppContext } from '../../context.js'
import { optionalUser, requireUser } from '../../http/auth.js'
import { ErrorResponse, ok, okItems, okItemsSchema, okSchema } from '../../http/envelope.js'
import { unauthorized, validationError } from '../../http/errors.js'
import { IdParams } from '../../http/schemas.js'
import { videoAsyncApi } from '../../video/asyncapi.js'
import { videoSecret } from '../../video/secret.js'
import { bodySignatureValid, SIGNATURE_HEADER, signTicket } from '../../video/ticket.js'
import * as rooms from './rooms.js'
import {
  CreateRoomBody,
  IceConfigView,
  JoinRoomBody,
  ParticipantView,
  RoomIdParams,
  RoomView,
  RtcSettingsBody,
  RtcSettingsView,
  TicketView,
  VideoReport,
} from './rooms-schemas.js'
import { upstreamTimeout, videoGet } from './video-client.js'

const secured = { tags: ['calls'], security: [{ bearer: [] }] }
/** a report older or newer than this is refused (a replayed one) */
const REPORT_SKEW_MS = 5 * 60_000

/** Where the video service reaches this server: VIDEO_CALLBACK_URL, or this listener. */
function callbackUrl(ctx: AppContext, request: FastifyRequest): string {
  if (ctx.config.videoCallbackUrl) return ctx.config.videoCallbackUrl
  const address = request.server.server.address() as AddressInfo | null
  if (!address || typeof address === 'string') return `http://127.0.0.1:${ctx.config.port}`
  const host = ['0.0.0.0', '::', '::1', '127.0.0.1'].includes(address.address)
    ? '127.0.0.1'
    : address.family === 'IPv6'
      ? `[${address.address}]`
      : address.address
  return `http://${host}:${address.port}`
}

const ticketRequest = (ctx: AppContext, request: FastifyRequest): rooms.TicketRequest => ({
  callbackUrl: callbackUrl(ctx, request),
  sessionId: request.sessionId,
})

export const roomRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.addHook('preValidation', requireUser(ctx))

  app.post(
    '/calls/rooms',
    {
      schema: {
        summary: 'Create a video room (you are its creator; join it to enter)',
        ...secured,
        body: CreateRoomBody,
        response: { 200: okSchema(RoomView) },
      },
    },
    async (request) => ok(await rooms.create(ctx, request.user, request.body.call_type)),
  )

  app.get(
    '/calls/rooms/:room_id/info',
    {
      schema: { summary: 'A video room', ...secured, params: RoomIdParams, response: { 200: okSchema(RoomView) } },
    },
    async (request) => ok(await rooms.get(ctx, request.user, request.params.room_id)),
  )

  app.post(
    '/calls/rooms/:room_id/join',
    {
      schema: {
        summary: 'Join a room: a short-lived ticket for the signaling socket, its URL and the ICE servers (409 when the room has ended)',
        ...secured,
        params: RoomIdParams,
        body: JoinRoomBody,
        response: { 200: okSchema(TicketView) },
      },
    },
    async (request) =>
      ok(await rooms.join(ctx, request.user, request.params.room_id, request.body?.audio_only ?? false, ticketRequest(ctx, request))),
  )

  app.post(
    '/calls/rooms/:room_id/leave',
    {
      schema: {
        summary: 'Leave a room; the room ends when its last participant leaves',
        ...secured,
        params: RoomIdParams,
        response: { 200: okSchema(RoomView) },
      },
    },
    async (request) => ok(await rooms.leave(ctx, request.user, request.params.room_id)),
  )

  app.get(
    '/calls/rooms/:room_id/participants',
    {
      schema: {
        summary: "A room's participants, present and past",
        ...secured,
        params: RoomIdParams,
        response: { 200: okItemsSchema(ParticipantView) },
      },
    },
    async (request) => okItems(await rooms.participants(ctx, request.user, request.params.room_id)),
  )

  app.post(
    '/calls/:id/ticket',
    {
      schema: {
        summary: "A ticket for an answered call's room (either party): the call's offer, answer and ICE go through the signaling socket",
        ...secured,
        params: IdParams,
        body: JoinRoomBody,
        response: { 200: okSchema(TicketView) },
      },
    },
    async (request) =>
      ok(await rooms.callTicket(ctx, request.user, request.params.id, request.body?.audio_only, ticketRequest(ctx, request))),
  )

  app.get(
    '/calls/rtc-settings',
    {
      schema: { summary: 'My own STUN/TURN servers (RTCSettings)', ...secured, response: { 200: okSchema(RtcSettingsView) } },
    },
    async (request) => ok(await rooms.getRtcSettings(ctx, request.user)),
  )

  app.post(
    '/calls/rtc-settings',
    {
      schema: {
        summary: 'Set my own STUN/TURN servers; enabled puts them first in my ICE configuration',
        ...secured,
        body: RtcSettingsBody,
        response: { 200: okSchema(RtcSettingsView) },
      },
    },
    async (request) => ok(await rooms.updateRtcSettings(ctx, request.user, request.body)),
  )
}

/** /video/integration/config (proxied), /video/asyncapi.json, and the video service's report endpoint. */
export async function videoRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const typed = app.withTypeProvider<import('@fastify/type-provider-typebox').TypeBoxTypeProvider>()
  typed.get(
    '/video/integration/config',
    {
      schema: {
        summary:
          'The WebRTC configuration (ICE servers), from the video service; with a session, TURN credentials and your own servers. 504 upstream_timeout when the video service does not answer',
        tags: ['calls'],
        response: {
          200: okSchema(IceConfigView),
          401: ErrorResponse,
          504: ErrorResponse,
        },
      },
    },
    async (request) => {
      const found = await optionalUser(ctx, request)
      const headers: Record<string, string> = {}
      if (found) {
        // a ticket for no room: it only tells the video service whose TURN credentials to make
        const ticket = signTicket(videoSecret(ctx.config), {
          room: '',
          uid: found.user.id,
          username: found.user.username,
          exp: ctx.clock.now() + 30_000,
          audio_only: false,
          cb: null,
        })
        headers.authorization = `Bearer ${ticket}`
      }
      const { body } = await videoGet(ctx, '/video/integration/config', headers)
      const data = (body as { data?: { ice_servers?: unknown; ttl_seconds?: unknown } } | null)?.data
      if (!data || !Array.isArray(data.ice_servers) || typeof data.ttl_seconds !== 'number')
        throw upstreamTimeout('The video service answered an unexpected configuration')
      const config = { ice_servers: data.ice_servers, ttl_seconds: data.ttl_seconds }
      return ok(found ? rooms.withUserServers(config, await rooms.rtcSettingsOf(ctx.db, found.user.id)) : config)
    },
  )

  const asyncApi = videoAsyncApi()
  typed.get('/video/asyncapi.json', { schema: { hide: true } }, async () => asyncApi)

  await app.register(async (internal) => {
    internal.removeAllContentTypeParsers()
    internal.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: 16 * 1024 }, (request, body, done) => {
      ;(request as FastifyRequest & { rawBody?: string }).rawBody = body as string
      try {
        done(null, JSON.parse(body as string))
      } catch {
        done(validationError('The body is not JSON'), undefined)
      }
    })
    internal.addHook('preValidation', async (request) => {
      const raw = (request as FastifyRequest & { rawBody?: string }).rawBody ?? ''
      if (!bodySignatureValid(videoSecret(ctx.config), raw, request.headers[SIGNATURE_HEADER]))
        throw unauthorized('The report is not signed with the video secret')
    })
    internal.withTypeProvider<import('@fastify/type-provider-typebox').TypeBoxTypeProvider>().post(
      '/internal/video/events',
      {
        schema: { hide: true, body: VideoReport },
      },
      async (request) => {
        if (Math.abs(request.body.at - ctx.clock.now()) > REPORT_SKEW_MS) throw unauthorized('The report is too old')
        return ok(await rooms.reportFromVideo(ctx, request.body))
      },
    )
  })
}
