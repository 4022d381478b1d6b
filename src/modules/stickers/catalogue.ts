/**
 * The sticker packs shipped with Tern, drawn here as SVG (no files on disk): a free pack and a
 * premium one whose stickers are animated. A message's `emoji_file` names one sticker by its path,
 * `stickers/<pack>/<sticker>.svg`, served publicly at `/stickers/<pack>/<sticker>.svg`. Pure.
 */

export interface Sticker {
  id: string
  /** the emoji it stands for */
  emoji: string
  svg: string
}

export interface StickerPack {
  id: string
  title: string
  is_premium: boolean
  stickers: readonly Sticker[]
}

type Face = { id: string; emoji: string; eyes: string; mouth: string; extra?: string }

const FACES: readonly Face[] = [
  {
    id: 'smile',
    emoji: '🙂',
    eyes: dots(),
    mouth: '<path d="M84 150 Q128 196 172 150" fill="none" stroke="#3a2a00" stroke-width="12" stroke-linecap="round"/>',
  },
  {
    id: 'grin',
    emoji: '😁',
    eyes: dots(),
    mouth: '<path d="M78 140 Q128 210 178 140 Z" fill="#3a2a00"/><path d="M92 148 L164 148 L158 162 L98 162 Z" fill="#fff"/>',
  },
  {
    id: 'wink',
    emoji: '😉',
    eyes: '<circle cx="96" cy="104" r="12" fill="#3a2a00"/><path d="M146 104 L178 104" stroke="#3a2a00" stroke-width="10" stroke-linecap="round"/>',
    mouth: '<path d="M90 152 Q128 186 166 152" fill="none" stroke="#3a2a00" stroke-width="12" stroke-linecap="round"/>',
  },
  { id: 'wow', emoji: '😮', eyes: dots(14), mouth: '<ellipse cx="128" cy="164" rx="20" ry="26" fill="#3a2a00"/>' },
  {
    id: 'sad',
    emoji: '🙁',
    eyes: dots(),
    mouth: '<path d="M88 176 Q128 136 168 176" fill="none" stroke="#3a2a00" stroke-width="12" stroke-linecap="round"/>',
  },
  {
    id: 'love',
    emoji: '😍',
    eyes: `${heart(96, 104)}${heart(160, 104)}`,
    mouth: '<path d="M84 150 Q128 196 172 150" fill="none" stroke="#3a2a00" stroke-width="12" stroke-linecap="round"/>',
  },
  {
    id: 'cool',
    emoji: '😎',
    eyes: '<path d="M64 92 H192 V110 Q188 134 160 134 Q140 134 134 112 H122 Q116 134 96 134 Q68 134 64 110 Z" fill="#1d1d1d"/>',
    mouth: '<path d="M96 162 Q128 182 160 162" fill="none" stroke="#3a2a00" stroke-width="12" stroke-linecap="round"/>',
  },
  {
    id: 'think',
    emoji: '🤔',
    eyes: dots(),
    mouth: '<path d="M100 166 L156 156" stroke="#3a2a00" stroke-width="12" stroke-linecap="round"/>',
    extra: '<circle cx="168" cy="196" r="22" fill="#f5b73b" stroke="#c98a12" stroke-width="6"/>',
  },
]

function dots(r = 12) {
  return `<circle cx="96" cy="104" r="${r}" fill="#3a2a00"/><circle cx="160" cy="104" r="${r}" fill="#3a2a00"/>`
}

function heart(x: number, y: number) {
  return `<path d="M${x} ${y + 14} C${x - 30} ${y - 6} ${x - 12} ${y - 26} ${x} ${y - 10} C${x + 12} ${y - 26} ${x + 30} ${y - 6} ${x} ${y + 14} Z" fill="#e8315b"/>`
}

/** A face; `animated` adds a gentle bounce and a shine (SMIL, so an <img> plays it). */
function draw(face: Face, colors: { skin: string; rim: string }, animated: boolean): string {
  const motion = animated
    ? '<animateTransform attributeName="transform" type="translate" values="0 0;0 -10;0 0" dur="1.2s" repeatCount="indefinite"/>'
    : ''
  const shine = animated
    ? '<circle cx="90" cy="70" r="14" fill="#fff" opacity="0.5"><animate attributeName="opacity" values="0.1;0.7;0.1" dur="1.6s" repeatCount="indefinite"/></circle>'
    : ''
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 256 256" width="256" height="256"><g>${motion}` +
    `<circle cx="128" cy="128" r="100" fill="${colors.skin}" stroke="${colors.rim}" stroke-width="8"/>${shine}${face.eyes}${face.mouth}${face.extra ?? ''}</g></svg>`
  )
}

const pack = (id: string, title: string, isPremium: boolean, colors: { skin: string; rim: string }): StickerPack => ({
  id,
  title,
  is_premium: isPremium,
  stickers: FACES.map((face) => ({ id: face.id, emoji: face.emoji, svg: draw(face, colors, isPremium) })),
})

export const STICKER_PACKS: readonly StickerPack[] = [
  pack('basics', 'Tern Basics', false, { skin: '#ffd35c', rim: '#e0a817' }),
  pack('gold', 'Tern Gold (animated)', true, { skin: '#ffc83d', rim: '#b8860b' }),
]

const PACKS = new Map(STICKER_PACKS.map((p) => [p.id, p]))

export const stickerPath = (packId: string, stickerId: string) => `stickers/${packId}/${stickerId}.svg`

/** The pack and sticker a path names (`stickers/<pack>/<sticker>.svg`), if it names one. */
export function findSticker(path: string): { pack: StickerPack; sticker: Sticker } | undefined {
  const match = /^stickers\/([a-z0-9-]{1,32})\/([a-z0-9-]{1,32})\.svg$/.exec(path)
  if (!match) return undefined
  const found = PACKS.get(match[1])
  const sticker = found?.stickers.find((s) => s.id === match[2])
  return found && sticker ? { pack: found, sticker } : undefined
}

/** Where a message's emoji_file is shown: a sticker, or (messages from before packs) an upload. */
export function emojiUrl(emojiFile: string | null): string | null {
  if (emojiFile === null) return null
  return emojiFile.startsWith('stickers/') ? `/${emojiFile}` : `/uploads/${emojiFile}`
}
