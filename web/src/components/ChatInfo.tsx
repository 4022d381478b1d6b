/** A group's or channel's details: description, members and their roles, the invite link, leaving. */
import { useSignal } from '@preact/signals'
import { useEffect } from 'preact/hooks'
import { api, data, describe, items, ok } from '../api'
import { navigate } from '../router'
import { chatById, chatChanges, chatTitle, loadChats, me, names } from '../store'
import { learnBots } from '../bots'
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
        info.value = {
          kind,
          name: g.name,
          description: g.description,
          count: g.member_count,
          invite_link: g.invite_link,
          my_role: g.my_role,
        }
        members.value = await items(api.GET('/api.v2/api/groups/members', { params: { query: { chat_id: chatId, per_page: 100 } } }))
      } else {
        const c = await data(api.GET('/api.v2/api/channels/info', { params: { query: { channel_id: chatId } } }))
        info.value = {
          kind,
          name: c.name,
          description: c.description,
          count: c.subscriber_count,
          invite_link: c.invite_link,
          my_role: c.my_role ?? null,
        }
        members.value = await items(
          api.GET('/api.v2/api/channels/subscribers', { params: { query: { channel_id: chatId, per_page: 100 } } }),
        ).catch(() => [])
      }
      for (const m of members.value) names.set(m.user_id, m.display_name || m.username)
      learnBots(members.value)
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
        <a href={`/app/chat/${chatId}`} class="icon back" aria-label="Back to the chat">
          <Icon name="back" />
        </a>
        <h2 id="info-title">{i?.name ?? chatTitle(item)}</h2>
      </header>
      <div class="page-body">
        {error.value ? (
          <p role="alert" class="error">
            {error.value}
          </p>
        ) : null}
        {i ? (
          <>
            <div class="card">
              <p>{i.description || <span class="muted">No description.</span>}</p>
              <p class="muted">
                {i.count} {kind === 'group' ? (i.count === 1 ? 'member' : 'members') : i.count === 1 ? 'subscriber' : 'subscribers'}
                {i.my_role ? ` · you are ${i.my_role}` : ''}
              </p>
            </div>
            {canManage ? <Settings kind={kind} chatId={chatId} info={i} act={act} reload={load} /> : null}
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
                {i.invite_link ? (
                  <button type="button" onClick={copy}>
                    {copied.value ? 'Copied' : 'Copy link'}
                  </button>
                ) : null}
                {canManage ? (
                  <button type="button" onClick={newLink}>
                    {i.invite_link ? 'New link' : 'Create link'}
                  </button>
                ) : null}
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
                    {m.user_id !== me.value?.id ? (
                      <MemberActions kind={kind} chatId={chatId} member={m} myRole={i.my_role} act={act} reload={load} />
                    ) : null}
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

type Act = (fn: () => Promise<unknown>) => void

/** What the owner and admins may do to one member (docs/permissions.md): roles, removal, ownership. */
function MemberActions({
  kind,
  chatId,
  member,
  myRole,
  act,
  reload,
}: {
  kind: Info['kind']
  chatId: number
  member: Member
  myRole: string | null
  act: Act
  reload: () => Promise<void>
}) {
  const owner = myRole === 'owner'
  const canRemove = member.role !== 'owner' && (owner || (myRole === 'admin' && member.role === 'member'))
  if (!owner && !canRemove) return null
  const who = member.display_name || member.username
  const then = (fn: () => Promise<unknown>) =>
    act(async () => {
      await fn()
      await reload()
    })
  const group = { chat_id: chatId, user_id: member.user_id }
  const channel = { channel_id: chatId, user_id: member.user_id }
  const promote = () =>
    then(() =>
      kind === 'group'
        ? ok(api.POST('/api.v2/api/groups/promote', { body: group }))
        : ok(api.POST('/api.v2/api/channels/add-admin', { body: channel })),
    )
  const demote = () =>
    then(() =>
      kind === 'group'
        ? ok(api.POST('/api.v2/api/groups/demote', { body: group }))
        : ok(api.POST('/api.v2/api/channels/remove-admin', { body: channel })),
    )
  const remove = () => {
    if (!confirm(`Remove ${who}?`)) return
    then(() =>
      kind === 'group'
        ? ok(api.POST('/api.v2/api/groups/remove-member', { body: group }))
        : ok(api.POST('/api.v2/api/channels/remove-subscriber', { body: channel })),
    )
  }
  const transfer = () => {
    if (!confirm(`Make ${who} the owner? You become an admin.`)) return
    then(async () => {
      if (kind === 'group') await ok(api.POST('/api.v2/api/groups/transfer', { body: group }))
      else await ok(api.POST('/api.v2/api/channels/transfer', { body: channel }))
      await loadChats()
    })
  }
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of buttons outside any form, not a fieldset
    <span class="member-actions" role="group" aria-label={`Manage ${who}`}>
      {owner && member.role === 'member' ? (
        <button type="button" class="link" onClick={promote} aria-label={`Make ${who} an admin`}>
          Make admin
        </button>
      ) : null}
      {owner && member.role === 'admin' ? (
        <button type="button" class="link" onClick={demote} aria-label={`Dismiss ${who} as admin`}>
          Dismiss admin
        </button>
      ) : null}
      {owner && member.role !== 'owner' ? (
        <button type="button" class="link" onClick={transfer} aria-label={`Make ${who} the owner`}>
          Make owner
        </button>
      ) : null}
      {canRemove ? (
        <button type="button" class="link danger" onClick={remove} aria-label={`Remove ${who}`}>
          Remove
        </button>
      ) : null}
    </span>
  )
}

/** The chat's name and description, for its owner and admins. */
function Settings({
  kind,
  chatId,
  info,
  act,
  reload,
}: {
  kind: Info['kind']
  chatId: number
  info: Info
  act: Act
  reload: () => Promise<void>
}) {
  const title = useSignal(info.name)
  const description = useSignal(info.description ?? '')
  const save = (event: Event) => {
    event.preventDefault()
    act(async () => {
      const name = title.value.trim()
      if (name && name !== info.name) {
        if (kind === 'group') await ok(api.POST('/api.v2/api/groups/set-title', { body: { chat_id: chatId, title: name } }))
        else await ok(api.POST('/api.v2/api/channels/set-title', { body: { channel_id: chatId, title: name } }))
      }
      if (description.value !== (info.description ?? '')) {
        if (kind === 'group')
          await ok(api.POST('/api.v2/api/groups/set-description', { body: { chat_id: chatId, description: description.value } }))
        else await ok(api.POST('/api.v2/api/channels/set-description', { body: { channel_id: chatId, description: description.value } }))
      }
      await reload()
      await loadChats()
    })
  }
  return (
    <form class="card" onSubmit={save} aria-labelledby="settings-title">
      <h3 id="settings-title">{kind === 'group' ? 'Group settings' : 'Channel settings'}</h3>
      <label for="chat-name">Name</label>
      <input
        id="chat-name"
        required
        maxLength={128}
        value={title.value}
        onInput={(e) => (title.value = (e.target as HTMLInputElement).value)}
      />
      <label for="chat-description">Description</label>
      <textarea
        id="chat-description"
        rows={2}
        maxLength={500}
        value={description.value}
        onInput={(e) => (description.value = (e.target as HTMLTextAreaElement).value)}
      />
      <div class="row-form">
        <button type="submit">Save</button>
      </div>
    </form>
  )
}
