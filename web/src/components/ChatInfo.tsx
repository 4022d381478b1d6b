/** A group's or channel's details: description, members and their roles, the invite link, leaving. */
import { useSignal } from '@preact/signals'
import { useEffect } from 'preact/hooks'
import { api, data, describe, items, ok } from '../api'
import { navigate } from '../router'
import { chatById, chatChanges, chatTitle, loadChats, me, names } from '../store'
import type { Member } from '../types'
import { Avatar } from './Avatar'
import { Icon } from './Icon'

interface Info {
  kind: 'group' | 'channel'
  name: string
  description: string | null
  count: number
  invite_link: string | null
  my_role: string | null
}

export function ChatInfo({ chatId }: { chatId: number }) {
  const item = chatById(chatId)
  const kind = item?.chat_type === 'channel' ? 'channel' : 'group'
  const info = useSignal<Info | null>(null)
  const members = useSignal<Member[]>([])
  const error = useSignal<string | null>(null)
  const add = useSignal('')
  const copied = useSignal(false)

  const load = async () => {
    try {
      if (kind === 'group') {
        const g = await data(api.GET('/api.v2/api/groups/info', { params: { query: { chat_id: chatId } } }))
        info.value = { kind, name: g.name, description: g.description, count: g.member_count, invite_link: g.invite_link, my_role: g.my_role }
        members.value = await items(api.GET('/api.v2/api/groups/members', { params: { query: { chat_id: chatId, per_page: 100 } } }))
      } else {
        const c = await data(api.GET('/api.v2/api/channels/info', { params: { query: { channel_id: chatId } } }))
        info.value = { kind, name: c.name, description: c.description, count: c.subscriber_count, invite_link: c.invite_link, my_role: c.my_role ?? null }
        members.value = await items(api.GET('/api.v2/api/channels/subscribers', { params: { query: { channel_id: chatId, per_page: 100 } } })).catch(() => [])
      }
      for (const m of members.value) names.set(m.user_id, m.display_name || m.username)
    } catch (e) {
      error.value = describe(e)
    }
  }
  useEffect(() => void load(), [chatId, chatChanges.value])

  const act = (fn: () => Promise<unknown>) => {
    error.value = null
    fn().catch((e) => (error.value = describe(e)))
  }
  const newLink = () =>
    act(async () => {
      const created =
        kind === 'group'
          ? await data(api.POST('/api.v2/api/groups/invite-link/create', { body: { chat_id: chatId } }))
          : await data(api.POST('/api.v2/api/channels/invite-link/create', { body: { channel_id: chatId } }))
      if (info.value) info.value = { ...info.value, invite_link: created.invite_link }
    })
  const addMember = (event: Event) => {
    event.preventDefault()
    act(async () => {
      const found = await items(api.GET('/api.v2/api/search/global', { params: { query: { q: add.value.trim(), per_page: 5 } } }))
      const exact = found.find((p) => p.username.toLowerCase() === add.value.trim().toLowerCase()) ?? found[0]
      if (!exact) throw new Error(`Nobody is called ${add.value.trim()}.`)
      await ok(api.POST('/api.v2/api/groups/add-member', { body: { chat_id: chatId, user_id: exact.user_id } }))
      add.value = ''
      await load()
    })
  }
  const leave = () =>
    act(async () => {
      if (kind === 'group') await ok(api.POST('/api.v2/api/groups/leave', { body: { chat_id: chatId } }))
      else await ok(api.POST('/api.v2/api/channels/unsubscribe', { body: { channel_id: chatId } }))
      await loadChats()
      navigate('/')
    })
  const copy = () =>
    act(async () => {
      await navigator.clipboard.writeText(info.value?.invite_link ?? '')
      copied.value = true
    })
  const canManage = info.value?.my_role === 'owner' || info.value?.my_role === 'admin'
  const i = info.value
  return (
    <section class="page" aria-labelledby="info-title">
      <header class="bar">
        <a href={`/app/chat/${chatId}`} class="icon back" aria-label="Back to the chat"><Icon name="back" /></a>
        <h2 id="info-title">{i?.name ?? chatTitle(item)}</h2>
      </header>
      <div class="page-body">
        {error.value ? <p role="alert" class="error">{error.value}</p> : null}
        {i ? (
          <>
            <div class="card">
              <p>{i.description || <span class="muted">No description.</span>}</p>
              <p class="muted">
                {i.count} {kind === 'group' ? (i.count === 1 ? 'member' : 'members') : i.count === 1 ? 'subscriber' : 'subscribers'}
                {i.my_role ? ` · you are ${i.my_role}` : ''}
              </p>
            </div>
            <div class="card">
              <h3>Invite link</h3>
              {i.invite_link ? (
                <p>
                  <label for="invite-url">Anyone with this link can join</label>
                  <input id="invite-url" readOnly value={i.invite_link} onFocus={(e) => (e.target as HTMLInputElement).select()} />
                </p>
              ) : (
                <p class="muted">No link yet.</p>
              )}
              <div class="row-form">
                {i.invite_link ? <button type="button" onClick={copy}>{copied.value ? 'Copied' : 'Copy link'}</button> : null}
                {canManage ? <button type="button" onClick={newLink}>{i.invite_link ? 'New link' : 'Create link'}</button> : null}
              </div>
            </div>
            {kind === 'group' && canManage ? (
              <form class="card" onSubmit={addMember}>
                <h3>Add a member</h3>
                <label for="add-member">Username</label>
                <div class="row-form">
                  <input id="add-member" required value={add.value} onInput={(e) => (add.value = (e.target as HTMLInputElement).value)} />
                  <button type="submit">Add</button>
                </div>
              </form>
            ) : null}
            <div class="card">
              <h3>{kind === 'group' ? 'Members' : 'Subscribers'}</h3>
              <ul class="plain people" aria-label={kind === 'group' ? 'Members' : 'Subscribers'}>
                {members.value.map((m) => (
                  <li>
                    <Avatar name={m.display_name || m.username} url={m.avatar_url} online={m.is_online} />
                    <span class="grow">
                      {m.display_name} <span class="muted">@{m.username}</span>
                      {m.user_id === me.value?.id ? <span class="muted"> (you)</span> : null}
                    </span>
                    <span class="role">{m.role}</span>
                  </li>
                ))}
              </ul>
            </div>
            <button type="button" class="danger" onClick={leave}>
              {kind === 'group' ? 'Leave the group' : 'Leave the channel'}
            </button>
          </>
        ) : error.value ? null : (
          <p class="muted">Loading…</p>
        )}
      </div>
    </section>
  )
}
