import { colorFor, initials } from '../format'

export function Avatar({ name, url, online }: { name: string; url?: string | null; online?: boolean }) {
  return (
    <span class="avatar" aria-hidden="true" style={url ? undefined : { background: colorFor(name) }}>
      {url ? <img src={url} alt="" width={40} height={40} loading="lazy" /> : initials(name)}
      {online ? <span class="dot" /> : null}
    </span>
  )
}
