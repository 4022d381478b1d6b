/**
 * The shell: a sidebar (the chat list and the app's sections) and the main pane (the route's
 * view). On a phone-sized screen one of the two is shown at a time: the list at /app, the chat
 * at /app/chat/<id>, each with a way back.
 */
import { useEffect } from 'preact/hooks'
import { route, onLinkClick, type RouteName } from '../router'
import { connection, notice, unreadTotal } from '../store'
import { ChatList } from './ChatList'
import { ChatView } from './ChatView'
import { ChatInfo } from './ChatInfo'
import { NewChat } from './NewChat'
import { Profile } from './Profile'
import { Search } from './Search'
import { StoriesStrip } from './Stories'
import { Ringing } from './Ringing'
import { Icon, type IconName } from './Icon'

/** The sections in the sidebar; stories, calls and bots join this list when they land. */
const SECTIONS: { href: string; label: string; icon: IconName; route: RouteName }[] = [
  { href: '/app', label: 'Chats', icon: 'chats', route: 'home' },
  { href: '/app/new', label: 'New', icon: 'new', route: 'new' },
  { href: '/app/search', label: 'Search', icon: 'search', route: 'search' },
  { href: '/app/profile', label: 'Profile', icon: 'profile', route: 'profile' },
]

const CONNECTION_TEXT = {
  connecting: 'Connecting…',
  online: '',
  offline: 'Offline: new messages arrive when you are back online.',
  suspended: 'This account is suspended.',
}

function Main() {
  const current = route.value
  switch (current.name) {
    case 'chat':
      return <ChatView key={current.id} chatId={current.id!} />
    case 'chat-info':
      return <ChatInfo key={current.id} chatId={current.id!} />
    case 'new':
      return <NewChat />
    case 'search':
      return <Search />
    case 'profile':
      return <Profile />
    case 'home':
      return (
        <section class="empty" aria-label="No chat open">
          <p>Choose a chat, or start a new one.</p>
        </section>
      )
    default:
      return (
        <section class="empty">
          <h1>Not found</h1>
          <p>
            <a href="/app">Back to your chats</a>
          </p>
        </section>
      )
  }
}

export function App() {
  const current = route.value
  useEffect(() => {
    const unread = unreadTotal.value
    document.title = `${unread ? `(${unread}) ` : ''}${current.title} · Tern`
  }, [current.title, unreadTotal.value])

  const listFirst = current.name === 'home'
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: it only delegates clicks on the links inside it, which are the interactive elements
    // biome-ignore lint/a11y/useKeyWithClickEvents: a link's Enter key fires the same click
    <div class={`shell ${listFirst ? 'show-list' : 'show-main'}`} onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <aside class="sidebar" aria-label="Chats and sections">
        <header class="bar">
          <h1 class="brand">Tern</h1>
          <nav aria-label="Sections" class="sections">
            {SECTIONS.map((s) => (
              <a href={s.href} aria-current={current.name === s.route ? 'page' : undefined} title={s.label}>
                <Icon name={s.icon} />
                <span class="label">{s.label}</span>
              </a>
            ))}
          </nav>
        </header>
        <p class={`connection ${connection.value}`} role="status" aria-live="polite">
          {CONNECTION_TEXT[connection.value]}
        </p>
        <StoriesStrip />
        <ChatList />
      </aside>
      <main id="main" tabIndex={-1} class="main">
        <Ringing />
        {notice.value ? (
          <div class="notice" role="alert">
            <span>{notice.value}</span>
            <button type="button" class="link" onClick={() => (notice.value = null)}>
              Dismiss
            </button>
          </div>
        ) : null}
        <Main />
      </main>
    </div>
  )
}
