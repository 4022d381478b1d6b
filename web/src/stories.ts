/**
 * Stories (24-hour posts): the feed of the people I may see (GET stories/feed, grouped here by
 * author, mine first), posting one (an upload, then stories/create), viewing (stories/{id}/view
 * marks it seen), liking, and deleting my own. `story.new` and `story.deleted` frames reload the
 * feed.
 */
import { computed, signal } from '@preact/signals'
import { api, data, items, ok, type Answered } from './api'
import { upload } from './upload'

export type Story = Answered<'/api.v2/api/stories/feed', 'get'>['items'][number]

export const feed = signal<Story[]>([])

/** one entry per author, in feed order, mine first; `unseen`: some story of theirs I have not viewed */
export const authors = computed(() => {
  const byAuthor = new Map<number, { user: Story['user']; stories: Story[]; unseen: boolean }>()
  for (const story of feed.value) {
    const entry = byAuthor.get(story.user_id) ?? { user: story.user, stories: [], unseen: false }
    entry.stories.push(story)
    entry.unseen ||= !story.is_viewed
    byAuthor.set(story.user_id, entry)
  }
  for (const entry of byAuthor.values()) entry.stories.sort((a, b) => a.story_id - b.story_id)
  return [...byAuthor.values()]
})

export async function loadStories() {
  feed.value = await items(api.GET('/api.v2/api/stories/feed'))
}

let reloadTimer: ReturnType<typeof setTimeout> | null = null
/** A story was posted or removed somewhere: reload the feed soon, once for a burst. */
export function storiesChanged() {
  if (reloadTimer) return
  reloadTimer = setTimeout(() => {
    reloadTimer = null
    void loadStories().catch(() => {})
  }, 200)
}

function replace(story: Story) {
  feed.value = feed.value.map((s) => (s.story_id === story.story_id ? { ...story, user: s.user } : s))
}

export async function viewStory(story: Story) {
  if (story.is_viewed) return
  replace({ ...(await data(api.POST('/api.v2/api/stories/{id}/view', { params: { path: { id: story.story_id } } }))), user: story.user })
}

export async function likeStory(story: Story) {
  const path = { params: { path: { id: story.story_id } } }
  const next = story.is_liked
    ? await data(api.POST('/api.v2/api/stories/{id}/unlike', path))
    : await data(api.POST('/api.v2/api/stories/{id}/like', path))
  replace({ ...next, user: story.user })
}

export async function deleteStory(story: Story) {
  await ok(api.DELETE('/api.v2/api/stories/{id}', { params: { path: { id: story.story_id } } }))
  feed.value = feed.value.filter((s) => s.story_id !== story.story_id)
}

/** Uploads a picture or video and posts it as a story for everyone who may see my stories. */
export async function postStory(file: File, caption: string, onProgress: (sent: number, total: number) => void) {
  const done = await upload(file, onProgress)
  await ok(api.POST('/api.v2/api/stories/create', { body: { media_path: done.path, ...(caption ? { caption } : {}) } }))
  await loadStories()
}
