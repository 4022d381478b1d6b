import { route } from '../router'
import { chatTitle, chats, chatsLoaded, loadChats, me, notice, showArchived, typing } from '../store'
import { shortTime } from '../format'
import type { ChatListItem } from '../types'
import { Avatar } from './Avatar'
import { Icon } from './Icon'

const KIND = { personal: 'Personal chat', group: 'Group', channel: 'Channel' }

function preview(item: ChatListItem): string {
  const typers = typing.value.get(item.chat_id)
  if (typers?.size) return `${[...typers.values()].join(', ')} typing…`
  const last = item.last_message
  if (!last) return item.chat_type === 'personal' ? 'No messages yet' : KIND[item.chat_type]
  const who =
    last.sender_id === me.value?.id ? 'You: ' : item.chat_type === 'personal' ? '' : last.sender_username ? `${last.sender_username}: ` : ''
  return `${who}${last.content || 'Attachment'}`
}

export function ChatList() {
  const current = route.value
  const openId = current.name === 'chat' || current.name === 'chat-info' ? current.id : null
  const toggleArchived = () => {
    showArchived.value = !showArchived.value
    loadChats().catch((error) => (notice.value = error.message))
  }
  return (
    <nav class="chat-list" aria-label={showArchived.value ? 'Archived chats' : 'Chats'}>
      {!chatsLoaded.value ? <p class="muted pad">Loading chats…</p> : null}
      {chatsLoaded.value && chats.value.length === 0 ? (
        <p class="muted pad">{showArchived.value ? 'No archived chats.' : 'No chats yet. Start one with New.'}</p>
      ) : null}
      <ul>
        {chats.value.map((item) => {
          const title = chatTitle(item)
          const online = item.peer?.is_online === true && !item.is_saved
          const unread = item.unread_count
          const label = [
            title,
            KIND[item.chat_type],
            online ? 'online' : '',
            unread ? `${unread} unread` : '',
            item.is_pinned ? 'pinned' : '',
          ]
            .filter(Boolean)
            .join(', ')
          return (
            <li key={item.chat_id}>
              <a
                href={`/app/chat/${item.chat_id}`}
                class={`chat-item${openId === item.chat_id ? ' active' : ''}`}
                aria-current={openId === item.chat_id ? 'page' : undefined}
                aria-label={label}
                data-chat-id={item.chat_id}
              >
                <Avatar name={title} url={item.peer?.avatar_url ?? item.group?.avatar_url ?? item.channel?.avatar_url} online={online} />
                <span class="chat-text">
                  <span class="chat-top">
                    <span class="chat-name">
                      {item.chat_type === 'channel' ? (
                        <Icon name="channel" size={16} />
                      ) : item.chat_type === 'group' ? (
                        <Icon name="group" size={16} />
                      ) : null}
                      {title}
                    </span>
                    {item.is_pinned ? (
                      <span class="pin">
                        <Icon name="pin" size={14} />
                      </span>
                    ) : null}
                    <span class="chat-time">{item.last_message ? shortTime(item.last_message.timestamp) : ''}</span>
                  </span>
                  <span class="chat-bottom">
                    <span class="chat-preview">{preview(item)}</span>
                    {unread ? (
                      <span class="badge" data-unread={unread}>
                        {unread}
                      </span>
                    ) : null}
                  </span>
                </span>
              </a>
            </li>
          )
        })}
      </ul>
      <button type="button" class="link archived-toggle" onClick={toggleArchived}>
        {showArchived.value ? 'Back to chats' : 'Archived chats'}
      </button>
    </nav>
  )
}
