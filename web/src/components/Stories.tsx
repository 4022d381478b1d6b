/**
 * The stories strip above the chat list: one ring per author (a coloured ring: something unseen),
 * mine first with "Add a story"; a ring opens the viewer, which steps through that author's
 * stories (← →, Escape closes), marks each one seen, likes it, and deletes my own.
 */
import { useSignal } from '@preact/signals'
import { useEffect, useRef } from 'preact/hooks'
import { describe } from '../api'
import { authors, deleteStory, likeStory, postStory, viewStory, type Story } from '../stories'
import { me, notice } from '../store'
import { Avatar } from './Avatar'
import { Icon } from './Icon'

export function StoriesStrip() {
  const open = useSignal<number | null>(null)
  const progress = useSignal<number | null>(null)
  const file = useRef<HTMLInputElement>(null)
  const add = async () => {
    const picked = file.current?.files?.[0]
    if (!picked) return
    progress.value = 0
    try {
      await postStory(picked, '', (sent, total) => (progress.value = total ? Math.round((sent / total) * 100) : 0))
    } catch (error) {
      notice.value = describe(error)
    } finally {
      progress.value = null
      if (file.current) file.current.value = ''
    }
  }
  const list = authors.value
  const viewing = list.find((a) => a.user.user_id === open.value)
  return (
    <section class="stories" aria-label="Stories">
      <ul class="plain stories-row">
        <li>
          <label class="story-ring add" title="Add a story (a picture or a video, for 24 hours)">
            <span class="story-plus" aria-hidden="true">
              <Icon name="story" />
            </span>
            <span class="story-name">{progress.value === null ? 'Add story' : `${progress.value}%`}</span>
            <input
              ref={file}
              type="file"
              accept="image/*,video/*"
              class="visually-hidden"
              onChange={add}
              disabled={progress.value !== null}
            />
          </label>
        </li>
        {list.map((a) => {
          const name = a.user.user_id === me.value?.id ? 'My story' : a.user.display_name || a.user.username
          return (
            <li>
              <button
                type="button"
                class={`story-ring${a.unseen ? ' unseen' : ''}`}
                onClick={() => (open.value = a.user.user_id)}
                aria-label={`${name}: ${a.stories.length} ${a.stories.length === 1 ? 'story' : 'stories'}${a.unseen ? ', new' : ''}`}
              >
                <Avatar name={a.user.display_name || a.user.username} url={a.user.avatar_url} />
                <span class="story-name" aria-hidden="true">
                  {name}
                </span>
              </button>
            </li>
          )
        })}
      </ul>
      {viewing ? <StoryViewer stories={viewing.stories} onClose={() => (open.value = null)} /> : null}
    </section>
  )
}

function StoryViewer({ stories, onClose }: { stories: Story[]; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null)
  const first = Math.max(
    0,
    stories.findIndex((s) => !s.is_viewed),
  )
  const index = useSignal(first)
  const at = Math.min(index.value, stories.length - 1)
  const story = stories[at]
  useEffect(() => {
    dialog.current?.showModal()
  }, [])
  useEffect(() => {
    if (story) void viewStory(story).catch(() => {})
  }, [story?.story_id])
  if (!story) return null
  const run = (fn: () => Promise<unknown>) => void fn().catch((error) => (notice.value = describe(error)))
  const mine = story.user_id === me.value?.id
  const step = (by: number) => {
    const next = at + by
    if (next < 0 || next >= stories.length) return dialog.current?.close()
    index.value = next
  }
  return (
    <dialog
      ref={dialog}
      class="story-viewer"
      aria-label={`Story by ${story.user.display_name || story.user.username}`}
      onClose={onClose}
      onKeyDown={(e) => (e.key === 'ArrowRight' ? step(1) : e.key === 'ArrowLeft' ? step(-1) : undefined)}
    >
      <header class="story-head">
        <strong>{story.user.display_name || story.user.username}</strong>
        <span class="muted small">
          <time dateTime={story.created_at}>{new Date(story.created_at).toLocaleString()}</time> · {at + 1}/{stories.length}
        </span>
      </header>
      {story.media_type === 'video' ? (
        <video class="story-media" src={story.media_url} controls autoPlay muted playsInline />
      ) : (
        <img class="story-media" src={story.media_url} alt={story.caption || 'Story'} />
      )}
      {story.caption ? <p class="story-caption">{story.caption}</p> : null}
      <div class="row-actions">
        <button type="button" onClick={() => step(-1)} disabled={at === 0}>
          Previous
        </button>
        <button type="button" onClick={() => step(1)}>
          {at === stories.length - 1 ? 'Done' : 'Next'}
        </button>
        {!mine ? (
          <button type="button" aria-pressed={story.is_liked} onClick={() => run(() => likeStory(story))}>
            {story.is_liked ? '♥ Liked' : '♡ Like'}
          </button>
        ) : null}
        {mine ? (
          <span class="muted small">
            {story.view_count ?? 0} {story.view_count === 1 ? 'view' : 'views'} · {story.like_count}{' '}
            {story.like_count === 1 ? 'like' : 'likes'}
          </span>
        ) : null}
        {mine ? (
          <button type="button" class="danger" onClick={() => confirm('Delete this story?') && run(() => deleteStory(story))}>
            Delete
          </button>
        ) : null}
        <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
    </dialog>
  )
}
