/**
 * One chat: its header (name, presence or typing), the history (older pages load as the person
 * scrolls up, keyset before_id), each message with its actions (reply, forward, react, edit,
 * delete), and the composer (text, reply, edit, attachments with a progress bar).
 */
import { useSignal } from '@preact/signals'
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks'
import { describe } from '../api'
import { clock, formatSize, isImage } from '../format'
import { navigate } from '../router'
import {
  chatById,
  chatTitle,
  chats,
  chatsLoaded,
  deleteMessage,
  editMessage,
  forward,
  history,
  loadHistory,
  markRead,
  me,
  notice,
  openChatId,
  react,
  sendMessage,
  sendTyping,
  setArchived,
  setPinned,
  typing,
} from '../store'
import type { ChatListItem, Msg } from '../types'
import { upload } from '../upload'
import { botIds, learnGroupBots } from '../bots'
import { callPageFor } from '../calls'
import { Avatar } from './Avatar'
import { BotKeyboard } from './BotKeyboard'
import { PollCard } from './PollCard'
import { PollDialog } from './PollDialog'
import { Icon } from './Icon'

export const REACTIONS = ['👍', '❤️', '😂', '😮', '😢', '🔥']

function subtitle(item: ChatListItem | undefined, chatId: number): string {
  const typers = typing.value.get(chatId)
  if (typers?.size) return `${[...typers.values()].join(', ')} ${typers.size > 1 ? 'are' : 'is'} typing…`
  if (!item) return ''
  if (item.is_saved) return 'Your notes and bookmarks'
  if (item.peer)
    return item.peer.is_online ? 'online' : item.peer.last_seen ? `last seen ${new Date(item.peer.last_seen).toLocaleString()}` : ''
  return item.chat_type === 'channel' ? 'Channel' : 'Group'
}

interface Actions {
  reply(msg: Msg): void
  edit(msg: Msg): void
  forward(msg: Msg): void
}

function Ticks({ msg }: { msg: Msg }) {
  if (msg.is_read)
    return (
      <span class="ticks read" role="img" aria-label="Read" title="Read">
        ✓✓
      </span>
    )
  return (
    <span class="ticks" role="img" aria-label="Sent" title="Sent">
      ✓
    </span>
  )
}

function MessageItem({ msg, group, admin, actions }: { msg: Msg; group: boolean; admin: boolean; actions: Actions }) {
  const mine = msg.sender_id === me.value?.id
  const open = useSignal(false)
  const menu = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (open.value) menu.current?.querySelector<HTMLButtonElement>('button')?.focus()
  }, [open.value])
  const run = (fn: () => unknown) => {
    open.value = false
    Promise.resolve(fn()).catch((error) => (notice.value = describe(error)))
  }
  const image = isImage(msg.file_type, msg.file_url)
  const reactions = Object.entries(msg.reactions).filter(([, n]) => n > 0)
  return (
    <li
      class={`msg ${mine ? 'mine' : 'theirs'}`}
      data-message-id={msg.id}
      aria-label={`${mine ? 'You' : msg.sender_username}, ${clock(msg.timestamp)}`}
    >
      <div class="bubble">
        {group && !mine ? <p class="sender">{msg.sender_username}</p> : null}
        {msg.forwarded_from ? <p class="forwarded">Forwarded from {msg.forwarded_from}</p> : null}
        {msg.reply_to_id ? (
          <blockquote class="quote">
            <span class="quote-sender">{msg.reply_to_sender ?? 'Reply'}</span>
            <span class="quote-text">{msg.reply_to_content ?? '…'}</span>
          </blockquote>
        ) : null}
        {msg.file_url && image ? (
          <a href={msg.file_url} target="_blank" rel="noopener" class="image-link">
            <img class="thumb" src={msg.thumbnail_url ?? msg.file_url} alt={msg.file_name ?? 'Image'} loading="lazy" />
          </a>
        ) : null}
        {msg.file_url && !image ? (
          <a href={msg.file_url} download={msg.file_name ?? true} class="file">
            <Icon name="attach" size={16} /> {msg.file_name ?? 'File'}{' '}
            {msg.file_size ? <span class="muted">({formatSize(msg.file_size)})</span> : null}
          </a>
        ) : null}
        {msg.poll_id !== null ? <PollCard pollId={msg.poll_id} canClose={admin} /> : msg.content ? <p class="text">{msg.content}</p> : null}
        {botIds.value.has(msg.sender_id) ? <BotKeyboard messageId={msg.id} /> : null}
        <p class="meta">
          {msg.edited_at ? <span class="edited">edited · </span> : null}
          <time dateTime={msg.timestamp}>{clock(msg.timestamp)}</time>
          {mine ? <Ticks msg={msg} /> : null}
        </p>
        {reactions.length ? (
          <ul class="reactions" aria-label="Reactions">
            {reactions.map(([emoji, count]) => (
              <li>
                <button
                  type="button"
                  class={`chip${msg.my_reaction === emoji ? ' on' : ''}`}
                  aria-pressed={msg.my_reaction === emoji}
                  aria-label={`${emoji} ${count}`}
                  onClick={() => run(() => react(msg.chat_id, msg.id, msg.my_reaction === emoji ? null : emoji))}
                >
                  {emoji} {count}
                </button>
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      <div class="msg-actions">
        <button
          type="button"
          class="icon"
          aria-haspopup="true"
          aria-expanded={open.value}
          aria-label="Message actions"
          onClick={() => (open.value = !open.value)}
        >
          <Icon name="more" size={18} />
        </button>
        {open.value ? (
          // biome-ignore lint/a11y/useSemanticElements: a menu of buttons outside any form, not a fieldset
          <div
            class="menu"
            ref={menu}
            role="group"
            aria-label="Message actions"
            onKeyDown={(e) => e.key === 'Escape' && (open.value = false)}
          >
            {/* biome-ignore lint/a11y/useSemanticElements: a row of buttons outside any form, not a fieldset */}
            <div class="react-row" role="group" aria-label="React">
              {REACTIONS.map((emoji) => (
                <button
                  type="button"
                  class="icon"
                  aria-label={`React ${emoji}`}
                  onClick={() => run(() => react(msg.chat_id, msg.id, emoji))}
                >
                  {emoji}
                </button>
              ))}
            </div>
            <button type="button" onClick={() => run(() => actions.reply(msg))}>
              Reply
            </button>
            <button type="button" onClick={() => run(() => actions.forward(msg))}>
              Forward
            </button>
            {mine && msg.content && msg.poll_id === null ? (
              <button type="button" onClick={() => run(() => actions.edit(msg))}>
                Edit
              </button>
            ) : null}
            <button type="button" onClick={() => run(() => deleteMessage(msg.chat_id, msg.id, false))}>
              Delete for me
            </button>
            {mine ? (
              <button type="button" class="danger" onClick={() => run(() => deleteMessage(msg.chat_id, msg.id, true))}>
                Delete for everyone
              </button>
            ) : null}
            <button type="button" onClick={() => (open.value = false)}>
              Close
            </button>
          </div>
        ) : null}
      </div>
    </li>
  )
}

function ForwardDialog({ msg, onClose }: { msg: Msg; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    dialog.current?.showModal()
  }, [])
  const pick = async (target: ChatListItem) => {
    try {
      await forward(msg.id, target.chat_id)
      onClose()
      navigate(`/chat/${target.chat_id}`)
    } catch (error) {
      notice.value = describe(error)
    }
  }
  return (
    <dialog ref={dialog} aria-labelledby="fwd-title" onClose={onClose}>
      <h2 id="fwd-title">Forward to…</h2>
      <ul class="plain">
        {chats.value.map((item) => (
          <li>
            <button type="button" class="row" onClick={() => pick(item)}>
              {chatTitle(item)}
            </button>
          </li>
        ))}
      </ul>
      <button type="button" onClick={() => dialog.current?.close()}>
        Cancel
      </button>
    </dialog>
  )
}

function Composer({
  chat,
  replyTo,
  editing,
  onDone,
}: {
  chat: ChatListItem
  replyTo: Msg | null
  editing: Msg | null
  onDone: () => void
}) {
  const chatId = chat.chat_id
  const text = useSignal(editing?.content ?? '')
  const writingPoll = useSignal(false)
  const progress = useSignal<{ name: string; sent: number; total: number } | null>(null)
  const busy = useSignal(false)
  const input = useRef<HTMLTextAreaElement>(null)
  const fileInput = useRef<HTMLInputElement>(null)
  // In the render's own task: as a (deferred) effect it could run after the user had begun typing
  // into the box, and wipe what they typed.
  useLayoutEffect(() => {
    text.value = editing?.content ?? ''
    input.current?.focus()
  }, [editing?.id, replyTo?.id])

  const submit = async (event?: Event) => {
    event?.preventDefault()
    const content = text.value.trim()
    if (!content || busy.value) return
    busy.value = true
    try {
      if (editing) await editMessage(chatId, editing.id, content)
      else await sendMessage(chatId, { content, reply_to_id: replyTo?.id ?? null })
      text.value = ''
      sendTyping(chatId, false)
      onDone()
    } catch (error) {
      notice.value = describe(error)
    } finally {
      busy.value = false
      input.current?.focus()
    }
  }

  const attach = async () => {
    const file = fileInput.current?.files?.[0]
    if (!file) return
    progress.value = { name: file.name, sent: 0, total: file.size }
    try {
      const done = await upload(file, (sent, total) => (progress.value = { name: file.name, sent, total }))
      const caption = text.value.trim()
      await sendMessage(
        chatId,
        { content: caption, file_path: done.path, reply_to_id: replyTo?.id ?? null },
        { thumbnail_url: done.thumbnail_url, file_name: done.file_name, file_size: done.size },
      )
      text.value = ''
      onDone()
    } catch (error) {
      notice.value = describe(error)
    } finally {
      progress.value = null
      if (fileInput.current) fileInput.current.value = ''
    }
  }

  const p = progress.value
  return (
    <>
      {writingPoll.value ? <PollDialog chat={chat} onClose={() => (writingPoll.value = false)} /> : null}
      <form class="composer" onSubmit={submit} aria-label="Write a message">
        {p ? (
          <div class="upload" role="status">
            <label for="upload-progress">Uploading {p.name}</label>
            <progress
              id="upload-progress"
              max={p.total || 1}
              value={p.sent}
              aria-valuetext={`${Math.round((p.sent / (p.total || 1)) * 100)}%`}
            />
          </div>
        ) : null}
        <div class="compose-row">
          <label class="icon attach" title="Attach a file">
            <Icon name="attach" />
            <span class="visually-hidden">Attach a file</span>
            <input ref={fileInput} type="file" class="visually-hidden" onChange={attach} disabled={p !== null} />
          </label>
          <button type="button" class="icon" aria-label="New poll" title="New poll" onClick={() => (writingPoll.value = true)}>
            <Icon name="poll" />
          </button>
          <label for="composer-text" class="visually-hidden">
            Message
          </label>
          <textarea
            id="composer-text"
            ref={input}
            rows={1}
            placeholder={editing ? 'Edit the message' : 'Message'}
            value={text.value}
            onInput={(e) => {
              text.value = (e.target as HTMLTextAreaElement).value
              sendTyping(chatId, text.value.length > 0)
            }}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) void submit(e)
              if (e.key === 'Escape' && (editing || replyTo)) onDone()
            }}
          />
          <button type="submit" class="send" disabled={busy.value}>
            {editing ? 'Save' : 'Send'}
          </button>
        </div>
      </form>
    </>
  )
}

export function ChatView({ chatId }: { chatId: number }) {
  const item = chatById(chatId)
  const h = history(chatId)
  const list = useRef<HTMLOListElement>(null)
  const replyTo = useSignal<Msg | null>(null)
  const editing = useSignal<Msg | null>(null)
  const forwarding = useSignal<Msg | null>(null)
  const stick = useRef(true)
  const anchor = useRef<{ height: number; top: number } | null>(null)
  const error = useSignal<string | null>(null)

  useEffect(() => {
    openChatId.value = chatId
    if (chatById(chatId)?.chat_type === 'group') void learnGroupBots(chatId).catch(() => {})
    loadHistory(chatId)
      .then(() => markRead(chatId))
      .catch((e) => (error.value = describe(e)))
    const onVisible = () => document.visibilityState === 'visible' && void markRead(chatId).catch(() => {})
    document.addEventListener('visibilitychange', onVisible)
    return () => {
      document.removeEventListener('visibilitychange', onVisible)
      if (openChatId.value === chatId) openChatId.value = null
    }
  }, [chatId])

  const items = h.items.value
  // keep the view where it was when older messages are added on top; follow new ones at the bottom
  useLayoutEffect(() => {
    const el = list.current
    if (!el) return
    if (anchor.current) {
      el.scrollTop = el.scrollHeight - anchor.current.height + anchor.current.top
      anchor.current = null
    } else if (stick.current) el.scrollTop = el.scrollHeight
  }, [items])

  const onScroll = () => {
    const el = list.current
    if (!el) return
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80
    if (el.scrollTop < 120 && h.hasMore.value && !h.loading.value && h.loaded) {
      anchor.current = { height: el.scrollHeight, top: el.scrollTop }
      loadHistory(chatId, true).catch((e) => (notice.value = describe(e)))
    }
  }

  if (!item && chatsLoaded.value && !h.loaded && error.value) {
    return (
      <section class="empty">
        <p role="alert">{error.value}</p>
        <a href="/app">Back to your chats</a>
      </section>
    )
  }
  const title = chatTitle(item)
  const group = item?.chat_type !== 'personal'
  // the composer waits for the chat list to say what this chat is (a channel's subscribers do not post)
  const admin = item?.my_role === 'owner' || item?.my_role === 'admin'
  const canPost = item !== undefined && (item.chat_type !== 'channel' || admin)
  const actions: Actions = {
    reply: (msg) => {
      editing.value = null
      replyTo.value = msg
    },
    edit: (msg) => {
      replyTo.value = null
      editing.value = msg
    },
    forward: (msg) => (forwarding.value = msg),
  }
  return (
    <section class="chat" aria-labelledby="chat-title">
      <header class="bar chat-head">
        <a href="/app" class="icon back" aria-label="Back to chats">
          <Icon name="back" />
        </a>
        <Avatar name={title} url={item?.peer?.avatar_url} online={item?.peer?.is_online} />
        <div class="chat-heading">
          <h2 id="chat-title">{title}</h2>
          <p class="muted small" aria-live="polite" data-testid="chat-status">
            {subtitle(item, chatId)}
          </p>
        </div>
        {item ? (
          <div class="head-actions">
            <button
              type="button"
              class="icon"
              aria-label={item.is_pinned ? 'Unpin chat' : 'Pin chat'}
              aria-pressed={!!item.is_pinned}
              onClick={() => setPinned(item, !item.is_pinned).catch((e) => (notice.value = describe(e)))}
            >
              <Icon name="pin" />
            </button>
            <button
              type="button"
              class="icon"
              aria-label={item.is_archived ? 'Unarchive chat' : 'Archive chat'}
              onClick={() => setArchived(item, !item.is_archived).catch((e) => (notice.value = describe(e)))}
            >
              <Icon name="archive" />
            </button>
            {item.peer && !item.peer.is_bot && !item.is_saved ? (
              <>
                <a href={callPageFor(item.peer.user_id, true)} class="icon" aria-label={`Voice call ${title}`} title="Voice call">
                  <Icon name="phone" />
                </a>
                <a href={callPageFor(item.peer.user_id)} class="icon" aria-label={`Video call ${title}`} title="Video call">
                  <Icon name="video" />
                </a>
              </>
            ) : null}
            {item.chat_type !== 'personal' ? (
              <a href={`/app/chat/${chatId}/info`} class="icon" aria-label={`${item.chat_type === 'channel' ? 'Channel' : 'Group'} info`}>
                <Icon name="info" />
              </a>
            ) : null}
          </div>
        ) : null}
      </header>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is focusable so that the keyboard can scroll it */}
      <ol class="messages" ref={list} onScroll={onScroll} aria-label={`Messages with ${title}`} tabIndex={0}>
        {h.loading.value && h.loaded ? <li class="muted center">Loading older messages…</li> : null}
        {!h.hasMore.value && items.length ? <li class="muted center small">The beginning of the chat</li> : null}
        {h.loaded && items.length === 0 ? <li class="muted center">No messages yet. Say hello!</li> : null}
        {items.map((msg) => (
          <MessageItem key={msg.id} msg={msg} group={group} admin={admin} actions={actions} />
        ))}
      </ol>
      {replyTo.value || editing.value ? (
        <div class="context-bar">
          <span>
            {editing.value ? 'Editing' : `Replying to ${replyTo.value!.sender_username}`}:{' '}
            <q>{(editing.value ?? replyTo.value)!.content || 'Attachment'}</q>
          </span>
          <button
            type="button"
            class="icon"
            aria-label={editing.value ? 'Cancel editing' : 'Cancel reply'}
            onClick={() => {
              replyTo.value = null
              editing.value = null
            }}
          >
            <Icon name="close" size={18} />
          </button>
        </div>
      ) : null}
      {canPost ? (
        <Composer
          chat={item!}
          replyTo={replyTo.value}
          editing={editing.value}
          onDone={() => {
            replyTo.value = null
            editing.value = null
          }}
        />
      ) : item ? (
        <p class="muted center pad">Only the channel's admins post here.</p>
      ) : null}
      {forwarding.value ? <ForwardDialog msg={forwarding.value} onClose={() => (forwarding.value = null)} /> : null}
    </section>
  )
}
