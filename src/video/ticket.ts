/**
 * Room tickets: what a client presents on the signaling socket. The main service issues one when a
 * user joins a room (or a call's room) and signs it with the shared video secret; the video service
 * checks the signature, the expiry and the room before relaying anything.
 *
 * Format: `v1.<base64url(JSON claims)>.<base64url(HMAC-SHA256(secret, "v1." + claims part))>`.
 * The same scheme signs the video service's reports to the main service (`signBody`).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export interface TicketClaims {
  /** the room id (VideoCall.room_id) */
  room: string
  /** the user */
  uid: number
  username: string
  /** expiry, epoch ms */
  exp: number
  audio_only: boolean
  /** where the video service reports joins, leaves and media state (the main service that issued it) */
  cb: string | null
  /** random, so two tickets never look alike */
  n: string
  /**
   * the main service's session that asked for it: when that session ends (logout, revoke, ban) the
   * video service closes the sockets it let in and refuses the ticket afterwards
   */
  sid?: number
}

const PREFIX = 'v1.'
/** a ticket longer than this is not read at all */
export const MAX_TICKET_LENGTH = 2048

function mac(secret: Buffer, text: string): Buffer {
  return createHmac('sha256', secret).update(text).digest()
}

export function signTicket(secret: Buffer, claims: Omit<TicketClaims, 'n'>): string {
  const body = PREFIX + Buffer.from(JSON.stringify({ ...claims, n: randomBytes(9).toString('base64url') })).toString('base64url')
  return `${body}.${mac(secret, body).toString('base64url')}`
}

export type TicketCheck = { ok: true; claims: TicketClaims } | { ok: false; reason: 'malformed' | 'forged' | 'expired' }

/** Checks a ticket's signature and expiry; never throws. */
export function verifyTicket(secret: Buffer, ticket: unknown, now: number): TicketCheck {
  if (typeof ticket !== 'string' || ticket.length > MAX_TICKET_LENGTH || !ticket.startsWith(PREFIX))
    return { ok: false, reason: 'malformed' }
  const dot = ticket.lastIndexOf('.')
  if (dot <= PREFIX.length) return { ok: false, reason: 'malformed' }
  const body = ticket.slice(0, dot)
  const given = Buffer.from(ticket.slice(dot + 1), 'base64url')
  const expected = mac(secret, body)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'forged' }
  let claims: unknown
  try {
    claims = JSON.parse(Buffer.from(body.slice(PREFIX.length), 'base64url').toString('utf8'))
  } catch {
    return { ok: false, reason: 'malformed' }
  }
  const c = claims as Partial<TicketClaims> | null
  if (
    typeof c !== 'object' ||
    c === null ||
    typeof c.room !== 'string' ||
    typeof c.uid !== 'number' ||
    typeof c.username !== 'string' ||
    typeof c.exp !== 'number' ||
    typeof c.audio_only !== 'boolean' ||
    (c.cb !== null && typeof c.cb !== 'string') ||
    typeof c.n !== 'string' ||
    c.n.length === 0 ||
    c.n.length > 64 ||
    (c.sid !== undefined && !Number.isSafeInteger(c.sid))
  ) {
    return { ok: false, reason: 'malformed' }
  }
  if (c.exp <= now) return { ok: false, reason: 'expired' }
  return { ok: true, claims: c as TicketClaims }
}

/** The signature header of a signed request body (the video service's reports, the main service's calls). */
export const SIGNATURE_HEADER = 'x-tern-video-signature'

export function signBody(secret: Buffer, body: string): string {
  return mac(secret, `body.${body}`).toString('base64url')
}

export function bodySignatureValid(secret: Buffer, body: string, signature: unknown): boolean {
  if (typeof signature !== 'string' || signature.length > 100) return false
  const given = Buffer.from(signature, 'base64url')
  const expected = mac(secret, `body.${body}`)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
