/** Start a personal chat (find a person), create a group or a channel, or join by invite link. */
import { useSignal } from '@preact/signals'
import { api, data, describe, items } from '../api'
import { navigate } from '../router'
import { loadChats } from '../store'
import type { Peer } from '../types'
import { Avatar } from './Avatar'
import { Icon } from './Icon'

export function NewChat() {
  const q = useSignal('')
  const people = useSignal<Peer[] | null>(null)
  const title = useSignal('')
  const kind = useSignal<'group' | 'channel'>('group')
  const link = useSignal('')
  const error = useSignal<string | null>(null)
  const busy = useSignal(false)

  const act = async (fn: () => Promise<void>) => {
    error.value = null
    busy.value = true
    try {
      await fn()
    } catch (e) {
      error.value = describe(e)
    } finally {
      busy.value = false
    }
  }
  const find = (event: Event) => {
    event.preventDefault()
    void act(async () => {
      people.value = await items(api.GET('/api.v2/api/search/global', { params: { query: { q: q.value.trim(), per_page: 20 } } }))
    })
  }
  const open = (peer: Peer) =>
    act(async () => {
      const item = await data(api.POST('/api.v2/api/chat/create', { body: { user_id: peer.user_id } }))
      await loadChats()
      navigate(`/chat/${item.chat_id}`)
    })
  const create = (event: Event) => {
    event.preventDefault()
    void act(async () => {
      const name = title.value.trim()
      const id =
        kind.value === 'group'
          ? (await data(api.POST('/api.v2/api/groups/create', { body: { title: name } }))).group_id
          : (await data(api.POST('/api.v2/api/channels/create', { body: { title: name } }))).channel_id
      await loadChats()
      navigate(`/chat/${id}`)
    })
  }
  const join = (event: Event) => {
    event.preventDefault()
    void act(async () => {
      const code = link.value.trim()
      const id = /\/channel\//.test(code)
        ? (await data(api.POST('/api.v2/api/channels/subscribe', { body: { code } }))).channel_id
        : (await data(api.POST('/api.v2/api/groups/invite-link/join', { body: { code } }))).group_id
      await loadChats()
      navigate(`/chat/${id}`)
    })
  }
  return (
    <section class="page" aria-labelledby="new-title">
      <header class="bar">
        <a href="/app" class="icon back" aria-label="Back to chats">
          <Icon name="back" />
        </a>
        <h2 id="new-title">New chat</h2>
      </header>
      <div class="page-body">
        {error.value ? (
          <p role="alert" class="error">
            {error.value}
          </p>
        ) : null}
        <form onSubmit={find} class="card">
          <h3>Message someone</h3>
          <label for="find-person">Username or name</label>
          <div class="row-form">
            <input
              id="find-person"
              type="search"
              minLength={2}
              required
              value={q.value}
              onInput={(e) => (q.value = (e.target as HTMLInputElement).value)}
            />
            <button type="submit" disabled={busy.value}>
              Find
            </button>
          </div>
          {people.value ? (
            people.value.length ? (
              <ul class="plain people">
                {people.value.map((peer) => (
                  <li>
                    <Avatar name={peer.display_name || peer.username} url={peer.avatar_url} online={peer.is_online} />
                    <span class="grow">
                      {peer.display_name} <span class="muted">@{peer.username}</span>
                    </span>
                    <button type="button" onClick={() => open(peer)} aria-label={`Message ${peer.username}`}>
                      Message
                    </button>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">Nobody found.</p>
            )
          ) : null}
        </form>
        <form onSubmit={create} class="card">
          <h3>Create a group or channel</h3>
          <fieldset>
            <legend>Kind</legend>
            <label class="inline">
              <input type="radio" name="kind" checked={kind.value === 'group'} onChange={() => (kind.value = 'group')} /> Group
            </label>
            <label class="inline">
              <input type="radio" name="kind" checked={kind.value === 'channel'} onChange={() => (kind.value = 'channel')} /> Channel
            </label>
          </fieldset>
          <label for="new-title-input">Name</label>
          <div class="row-form">
            <input
              id="new-title-input"
              required
              maxLength={128}
              value={title.value}
              onInput={(e) => (title.value = (e.target as HTMLInputElement).value)}
            />
            <button type="submit" disabled={busy.value}>
              Create
            </button>
          </div>
        </form>
        <form onSubmit={join} class="card">
          <h3>Join with an invite link</h3>
          <label for="invite-link">Invite link or code</label>
          <div class="row-form">
            <input id="invite-link" required value={link.value} onInput={(e) => (link.value = (e.target as HTMLInputElement).value)} />
            <button type="submit" disabled={busy.value}>
              Join
            </button>
          </div>
        </form>
      </div>
    </section>
  )
}
