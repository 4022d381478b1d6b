/**
 * The preloaded avatars: images shipped with Tern (drawn here as SVG, so they need no files on
 * disk), which a user can pick instead of uploading one. A user's avatar column holds either an
 * upload's path or `preloaded/<id>`; upload paths never contain a slash, so the two cannot meet.
 * Pure.
 */

export interface PreloadedAvatar {
  id: string
  title: string
  /** served at /avatars/preloaded/{id}.svg */
  svg: string
}

const PREFIX = 'preloaded/'

type Shape = (fg: string) => string
const SHAPES: Record<string, Shape> = {
  circle: (fg) => `<circle cx="128" cy="128" r="64" fill="${fg}"/>`,
  square: (fg) => `<rect x="76" y="76" width="104" height="104" rx="14" transform="rotate(45 128 128)" fill="${fg}"/>`,
  triangle: (fg) => `<path d="M128 58 L198 186 L58 186 Z" fill="${fg}" stroke="${fg}" stroke-width="12" stroke-linejoin="round"/>`,
  hexagon: (fg) => `<path d="M128 56 L190 92 L190 164 L128 200 L66 164 L66 92 Z" fill="${fg}"/>`,
  star: (fg) =>
    `<path d="M128 52 L148 106 L206 108 L160 144 L176 200 L128 168 L80 200 L96 144 L50 108 L108 106 Z" fill="${fg}" stroke="${fg}" stroke-width="6" stroke-linejoin="round"/>`,
  ring: (fg) => `<circle cx="128" cy="128" r="56" fill="none" stroke="${fg}" stroke-width="28"/>`,
}

const PALETTES: readonly { name: string; from: string; to: string }[] = [
  { name: 'Dawn', from: '#ff9a5a', to: '#e8457c' },
  { name: 'Lagoon', from: '#3fd1c7', to: '#2f6fd8' },
  { name: 'Meadow', from: '#9be15d', to: '#1fa56b' },
  { name: 'Dusk', from: '#a88bff', to: '#5b3cc4' },
]

const TITLES: Record<string, string> = { circle: 'Sun', square: 'Tile', triangle: 'Peak', hexagon: 'Cell', star: 'Star', ring: 'Orbit' }

function draw(id: string, shape: Shape, from: string, to: string): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 256 256" width="256" height="256">` +
    `<defs><linearGradient id="${id}" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${from}"/><stop offset="1" stop-color="${to}"/></linearGradient></defs>` +
    `<rect width="256" height="256" fill="url(#${id})"/>${shape('#ffffff')}</svg>`
  )
}

/** Every preloaded avatar, in catalogue order. */
export const PRELOADED_AVATARS: readonly PreloadedAvatar[] = PALETTES.flatMap((palette) =>
  Object.entries(SHAPES).map(([shape, render]) => {
    const id = `${palette.name.toLowerCase()}-${shape}`
    return { id, title: `${palette.name} ${TITLES[shape]}`, svg: draw(id, render, palette.from, palette.to) }
  }),
)

const BY_ID = new Map(PRELOADED_AVATARS.map((avatar) => [avatar.id, avatar]))

export const findPreloaded = (id: string): PreloadedAvatar | undefined => BY_ID.get(id)

/** The avatar column's value for a preloaded avatar. */
export const preloadedAvatarValue = (id: string) => `${PREFIX}${id}`

export const preloadedUrl = (id: string) => `/avatars/preloaded/${id}.svg`

/** A user's avatar URL: an upload (/uploads/…) or a preloaded image (/avatars/preloaded/…). */
export function avatarUrl(value: string | null): string | null {
  if (value === null) return null
  if (value.startsWith(PREFIX)) return preloadedUrl(value.slice(PREFIX.length))
  return `/uploads/${value}`
}
