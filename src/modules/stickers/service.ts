/**
 * Stickers: the packs a user may send from. A premium pack's stickers need Tern Premium at the
 * moment of sending (forwarding a message that carries one is not sending from the pack).
 */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { invalidFile, premiumRequired } from '../../http/errors.js'
import { isPremium } from '../users/index.js'
import { findSticker, STICKER_PACKS, stickerPath } from './catalogue.js'

export function packs(ctx: AppContext, me: UserRow) {
  const premium = isPremium(me, ctx.clock.now())
  return STICKER_PACKS.map((pack) => ({
    pack_id: pack.id,
    title: pack.title,
    is_premium: pack.is_premium,
    /** whether I may send its stickers now */
    available: !pack.is_premium || premium,
    stickers: pack.stickers.map((sticker) => {
      const path = stickerPath(pack.id, sticker.id)
      return { sticker_id: sticker.id, emoji: sticker.emoji, emoji_file: path, url: `/${path}` }
    }),
  }))
}

/** 400 invalid_file unless `path` is a sticker of a pack; 403 premium_required for a premium pack without premium. */
export function requireUsable(ctx: AppContext, me: UserRow, path: string) {
  const found = findSticker(path)
  if (!found) throw invalidFile('emoji_file must be a sticker of a pack (GET V2/stickers)')
  if (found.pack.is_premium && !isPremium(me, ctx.clock.now()))
    throw premiumRequired(`The ${found.pack.title} stickers are a Tern Premium feature`)
}
