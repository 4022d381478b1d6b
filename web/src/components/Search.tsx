/** Global search: people by name, and messages in my chats by their words. */
import { useSignal } from '@preact/signals'
import { api, data, describe, items } from '../api'
import { shortTime } from '../format'
import { navigate } from '../router'
import { loadChats } from '../store'
import type { MessageView, Peer } from '../types'
import { Avatar } from './Avatar'
import { Icon } from './Icon'

export function Search() {
  const q = useSignal('')
  const people = useSignal<Peer[] | null>(null)
  const messages = useSignal<MessageView[] | null>(null)
  const error = useSignal<string | null>(null)
  const run = async (event: Event) => {
    event.preventDefault()
    error.value = null
    const query = q.value.trim()
    try {
      const [p, m] = await Promise.all([
        items(api.GET('/api.v2/api/search/global', { params: { query: { q: query, per_page: 20 } } })),
        data(api.GET('/api.v2/api/search/messages', { params: { query: { q: query, limit: 20 } } })).catch(() => ({ items: [] })),
      ])
      people.value = p
      messages.value = m.items
    } catch (e) {
      error.value = describe(e)
    }
  }
  const openPeer = async (peer: Peer) => {
    try {
      const item = await data(api.POST('/api.v2/api/chat/create', { body: { user_id: peer.user_id } }))
      await loadChats()
      navigate(`/chat/${item.chat_id}`)
    } catch (e) {
      error.value = describe(e)
    }
  }
  return (
    <section class="page" aria-labelledby="search-title">
      <header class="bar">
        <a href="/app" class="icon back" aria-label="Back to chats">
          <Icon name="back" />
        </a>
        <h2 id="search-title">Search</h2>
      </header>
      <div class="page-body">
        {/* biome-ignore lint/a11y/useSemanticElements: the search landmark on the form itself */}
        <form role="search" onSubmit={run} class="row-form">
          <label for="search-q" class="visually-hidden">
            Search people and messages
          </label>
          <input
            id="search-q"
            type="search"
            minLength={2}
            required
            placeholder="People and messages"
            value={q.value}
            onInput={(e) => (q.value = (e.target as HTMLInputElement).value)}
          />
          <button type="submit">Search</button>
        </form>
        {error.value ? (
          <p role="alert" class="error">
            {error.value}
          </p>
        ) : null}
        {people.value ? (
          <div class="card">
            <h3>People</h3>
            {people.value.length ? (
              <ul class="plain people">
                {people.value.map((peer) => (
                  <li>
                    <Avatar name={peer.display_name || peer.username} url={peer.avatar_url} online={peer.is_online} />
                    <span class="grow">
                      {peer.display_name} <span class="muted">@{peer.username}</span>
                    </span>
                    <button type="button" onClick={() => openPeer(peer)} aria-label={`Message ${peer.username}`}>
                      Message
                    </button>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">Nobody found.</p>
            )}
          </div>
        ) : null}
        {messages.value ? (
          <div class="card">
            <h3>Messages</h3>
            {messages.value.length ? (
              <ul class="plain">
                {messages.value.map((m) => (
                  <li>
                    <a href={`/app/chat/${m.chat_id}`} class="row">
                      <strong>{m.sender_username}</strong> <span class="muted small">{shortTime(m.timestamp)}</span>
                      <br />
                      {m.content}
                    </a>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">No messages found.</p>
            )}
          </div>
        ) : null}
      </div>
    </section>
  )
}
