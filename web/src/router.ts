/**
 * Client-side routing under /app (the server answers every /app/* with index.html). The route
 * table is the one place a new part of the app (stories, calls, polls, bots) is added: a pattern,
 * and the view's name, which App.tsx maps to a component.
 */
import { signal } from '@preact/signals'

export const BASE = '/app'

export type RouteName = 'home' | 'chat' | 'chat-info' | 'new' | 'search' | 'profile' | 'not-found'

interface RouteDef {
  name: RouteName
  pattern: RegExp
  title: string
}

export const ROUTES: RouteDef[] = [
  { name: 'home', pattern: /^\/?$/, title: 'Chats' },
  { name: 'chat', pattern: /^\/chat\/(\d{1,15})$/, title: 'Chat' },
  { name: 'chat-info', pattern: /^\/chat\/(\d{1,15})\/info$/, title: 'Chat info' },
  { name: 'new', pattern: /^\/new$/, title: 'New chat' },
  { name: 'search', pattern: /^\/search$/, title: 'Search' },
  { name: 'profile', pattern: /^\/profile$/, title: 'Profile and settings' },
]

export interface Route {
  name: RouteName
  /** the numeric parameter of the route (a chat id), or null */
  id: number | null
  title: string
}

export function match(pathname: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname
  for (const def of ROUTES) {
    const found = def.pattern.exec(rest)
    if (found) return { name: def.name, id: found[1] ? Number(found[1]) : null, title: def.title }
  }
  return { name: 'not-found', id: null, title: 'Not found' }
}

export const route = signal<Route>(match(location.pathname))

export function navigate(path: string, replace = false) {
  const url = path.startsWith(BASE) ? path : `${BASE}${path}`
  if (replace) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  route.value = match(location.pathname)
}

addEventListener('popstate', () => (route.value = match(location.pathname)))

/** Links inside the app navigate without a reload (a plain <a href> otherwise). */
export function onLinkClick(event: MouseEvent) {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  const anchor = (event.target as Element | null)?.closest?.('a')
  if (!anchor || anchor.target || anchor.hasAttribute('download')) return
  const url = new URL(anchor.href, location.href)
  if (url.origin !== location.origin || !url.pathname.startsWith(BASE)) return
  event.preventDefault()
  navigate(url.pathname + url.search)
}
