/** Small display helpers. */
export function shortTime(iso: string): string {
  const date = new Date(iso)
  const now = new Date()
  if (date.toDateString() === now.toDateString()) return date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
  return date.toLocaleDateString([], { day: 'numeric', month: 'short' })
}

export const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })

export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean)
  const letters = words.length > 1 ? [words[0], words[1]] : [name]
  return (
    letters
      .map((w) => [...w][0] ?? '')
      .join('')
      .toUpperCase() || '?'
  )
}

/** a dark background per name, white text on it keeps a contrast above 4.5:1 */
const COLORS = ['#1f5fa8', '#8a3ab9', '#1d7a46', '#a14000', '#6b4f9e', '#00697a', '#a4262c', '#4a5a16']
export function colorFor(key: string): string {
  let hash = 0
  for (const ch of key) hash = (hash * 31 + ch.charCodeAt(0)) | 0
  return COLORS[Math.abs(hash) % COLORS.length]
}

export function formatSize(bytes: number | null): string {
  if (bytes === null) return ''
  const units = ['B', 'KB', 'MB', 'GB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}

export const isImage = (type: string | null, url: string | null) =>
  type === 'image' || (url !== null && /\.(png|jpe?g|gif|webp|avif)$/i.test(url))
