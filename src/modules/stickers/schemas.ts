import { Type } from 'typebox'

export const StickerView = Type.Object({ sticker_id: Type.String(), emoji: Type.String(), emoji_file: Type.String(), url: Type.String() })

export const Pack = Type.Object({
  pack_id: Type.String(),
  title: Type.String(),
  is_premium: Type.Boolean(),
  available: Type.Boolean(),
  stickers: Type.Array(StickerView),
})
