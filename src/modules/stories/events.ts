/** The events of stories: what followers and owners hear when stories come, go and are seen. */
import { Type } from 'typebox'
import { defineEvents } from '../../events/define.js'
import { FeedStory } from './schemas.js'

export const StoryDeleted = Type.Object({ story_id: Type.Integer(), user_id: Type.Integer() })
export const StoryCounts = Type.Object({
  story_id: Type.Integer(),
  view_count: Type.Integer(),
  like_count: Type.Integer(),
  reaction_count: Type.Integer(),
})

export const storyEvents = defineEvents({
  'story.new': {
    payload: Type.Object({ story: FeedStory }),
    routes: ['user'],
    summary: "Someone I follow (a contact, or a personal-chat peer) posted a story I may see; also to the author's own devices.",
  },
  'story.deleted': {
    payload: StoryDeleted,
    routes: ['user'],
    summary: 'Its author deleted a story I could see (expired stories simply pass their expires_at).',
  },
  'story.viewed': {
    payload: StoryCounts,
    routes: ['user'],
    summary:
      "To a story's owner: someone viewed, liked, unliked or reacted to it; the counts as they are now (who did it is the premium viewer list's).",
  },
})
