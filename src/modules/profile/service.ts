/**
 * Profiles: a user's public face (fuller Peer, bio, link; phone as their privacy allows), its
 * editing with bounds, the preloaded avatars, and the privacy settings themselves (who sees last
 * seen, phone and avatar). Changing who sees the last seen tells each personal-chat peer what they
 * see now.
 */
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { Audience, UserRow, UserUpdate } from '../../db/tables.js'
import { conflict, invalidFile, notFound, premiumRequired, validationError } from '../../http/errors.js'
import { toE164 } from '../../lib/phone.js'
import * as blocks from '../../policies/blocks.js'
import * as contacts from '../contacts/index.js'
import { sightFor } from '../../policies/sight.js'
import { requireUploaded } from '../files/index.js'
import { presenceOf } from '../presence/index.js'
import { findPreloaded, preloadedAvatarValue, preloadedUrl, PRELOADED_AVATARS } from '../users/index.js'
import { countersFor } from './counters.js'
import { isPremium, presentFullPeer } from '../users/index.js'
import * as users from '../users/index.js'
import { BIO_MAX, BIO_MAX_PREMIUM } from './schemas.js'
import { isUsable } from '../../policies/accounts.js'

export interface ProfileChanges {
  display_name?: string
  bio?: string
  avatar?: string | null
  preloaded_avatar?: string
  phone?: string | null
  status_emoji?: string
  link?: string | null
}

export interface PrivacyChanges {
  last_seen?: Audience
  phone?: Audience
  avatar?: Audience
}

/** A profile by username (case-insensitive), as I see it; 404 for unknown and closed accounts. */
export async function view(ctx: AppContext, me: UserRow, username: string) {
  const user = await users.findByUsername(ctx, username)
  if (!user || !isUsable(user)) throw notFound('User not found')
  return present(ctx, me, user)
}

async function present(ctx: AppContext, me: UserRow, user: UserRow) {
  const self = user.id === me.id
  const [blocked, isContact, counters] = await Promise.all([
    self ? false : blocks.blockedAround(ctx.db, me.id).then((set) => set.has(user.id)),
    self ? false : contacts.isContactOf(ctx.db, me.id, user.id),
    countersFor(ctx, user.id),
  ])
  const sight = await sightFor(ctx.db, me.id, user, blocked)
  return {
    ...presentFullPeer(user, ctx.clock.now(), counters, sight),
    link: user.link,
    phone: sight.phone ? user.phone : null,
    is_contact: isContact,
  }
}

/** Changes my profile; answers it as others with full sight see it. */
export async function update(ctx: AppContext, me: UserRow, input: ProfileChanges) {
  const changes: UserUpdate = {}
  if (input.display_name !== undefined) {
    const name = input.display_name.trim()
    if (name === '') throw validationError('display_name must not be blank')
    changes.display_name = name
  }
  if (input.bio !== undefined) {
    const bio = input.bio.trim()
    if ([...bio].length > BIO_MAX && !isPremium(me, ctx.clock.now())) {
      throw premiumRequired(`bio: at most ${BIO_MAX} characters (${BIO_MAX_PREMIUM} with Tern Premium)`)
    }
    changes.bio = bio
  }
  if (input.avatar !== undefined && input.preloaded_avatar !== undefined)
    throw validationError('Send either avatar or preloaded_avatar, not both')
  if (input.avatar !== undefined) changes.avatar = input.avatar === null ? null : await ownImage(ctx, me, input.avatar)
  if (input.preloaded_avatar !== undefined) {
    if (!findPreloaded(input.preloaded_avatar)) throw validationError('preloaded_avatar: no such avatar (see GET avatars/preloaded)')
    changes.avatar = preloadedAvatarValue(input.preloaded_avatar)
  }
  if (input.phone !== undefined) {
    const raw = input.phone?.trim() ?? ''
    const phone = raw === '' ? null : toE164(raw, ctx.config.phoneDefaultRegion)
    if (raw !== '' && phone === null) throw validationError('phone must be a valid phone number, e.g. +79161234567')
    changes.phone = phone
  }
  if (input.status_emoji !== undefined) {
    if (input.status_emoji !== '' && !isOneEmoji(input.status_emoji)) throw validationError('status_emoji must be a single emoji')
    // clearing it needs nothing; showing one is a premium feature
    if (input.status_emoji !== '' && !isPremium(me, ctx.clock.now())) throw premiumRequired('A status emoji is a Tern Premium feature')
    changes.status_emoji = input.status_emoji
  }
  if (input.link !== undefined) changes.link = input.link === null || input.link.trim() === '' ? null : httpUrl(input.link.trim())
  let updated = me
  if (Object.keys(changes).length > 0) {
    try {
      updated = (await users.updateUser(ctx.db, me.id, changes))!
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('This phone number belongs to another account')
      throw error
    }
  }
  return present(ctx, updated, updated)
}

/** The path of an image I uploaded; 400 invalid_file for anything else. */
async function ownImage(ctx: AppContext, me: UserRow, path: string): Promise<string> {
  const file = await requireUploaded(ctx, me.id, path)
  if (file.file_type !== 'image') throw invalidFile('avatar must be an image')
  return file.file_path
}

const EMOJI = /^(?:\p{Extended_Pictographic}|\p{Regional_Indicator}|\p{Emoji_Modifier}|\p{Emoji_Component}|\u200d|\ufe0f)+$/u
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/** Exactly one emoji (a flag, a skin tone and a joined family are each one). */
function isOneEmoji(text: string): boolean {
  if (!EMOJI.test(text) || !/\p{Extended_Pictographic}|\p{Regional_Indicator}/u.test(text)) return false
  let count = 0
  for (const _ of graphemes.segment(text)) if (++count > 1) return false
  return count === 1
}

function httpUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw validationError('link must be an http or https URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationError('link must be an http or https URL')
  return url.href
}

export function privacyOf(user: UserRow) {
  return { last_seen: user.privacy_last_seen, phone: user.privacy_phone, avatar: user.privacy_avatar }
}

/** Changes who sees what; peers get my presence as they may now see it. */
export async function updatePrivacy(ctx: AppContext, me: UserRow, input: PrivacyChanges) {
  const changes: UserUpdate = {}
  if (input.last_seen !== undefined) changes.privacy_last_seen = input.last_seen
  if (input.phone !== undefined) changes.privacy_phone = input.phone
  if (input.avatar !== undefined) changes.privacy_avatar = input.avatar
  if (Object.keys(changes).length === 0) return privacyOf(me)
  const updated = (await users.updateUser(ctx.db, me.id, changes))!
  if (updated.privacy_last_seen !== me.privacy_last_seen) await presenceOf(ctx).reannounce(me.id)
  return privacyOf(updated)
}

export const preloadedAvatars = () =>
  PRELOADED_AVATARS.map((avatar) => ({ id: avatar.id, title: avatar.title, url: preloadedUrl(avatar.id) }))
