/** Story rows → the API's Story shapes (V2 and V1). Pure. */
import type { Static } from 'typebox'
import { iso } from '../../lib/time.js'
import { uploadUrl, type PeerView } from '../users/index.js'
import type { StoryWithState } from './repo.js'
import type { FeedStory, StoryV1, StoryView } from './schemas.js'

export type StoryShape = Static<typeof StoryView>
export type FeedStoryShape = Static<typeof FeedStory>
export type StoryV1Shape = Static<typeof StoryV1>

/** The Story as `viewerId` sees it: counts of views only for its owner, `my_reaction` the viewer's own. */
export function presentStory(row: StoryWithState, viewerId: number): StoryShape {
  const own = row.user_id === viewerId
  return {
    story_id: row.id,
    user_id: row.user_id,
    media_path: row.media_path,
    media_url: uploadUrl(row.media_path)!,
    media_type: row.media_type,
    caption: row.caption,
    music_path: row.music_path,
    privacy_type: row.privacy_type,
    created_at: iso(row.created_at),
    expires_at: iso(row.expires_at),
    is_viewed: own || row.my_viewed_at !== null,
    view_count: own ? row.view_count : null,
    like_count: row.like_count,
    is_liked: row.my_liked_at !== null,
    my_reaction: row.my_reaction,
  }
}

export function presentFeedStory(row: StoryWithState, viewerId: number, author: PeerView): FeedStoryShape {
  return { ...presentStory(row, viewerId), user: author }
}

/** The V1 variant of a story as its reader sees it; `viewers` only for its owner. */
export function presentV1(story: FeedStoryShape, viewers: PeerView[]): StoryV1Shape {
  return {
    story_id: story.story_id,
    user_id: story.user_id,
    user: story.user,
    media_path: story.media_path,
    media_url: story.media_url,
    media_type: story.media_type,
    caption: story.caption,
    created_at: story.created_at,
    expires_at: story.expires_at,
    is_viewed: story.is_viewed,
    views: viewers,
    likes: story.like_count,
    liked: story.is_liked,
    my_reaction: story.my_reaction ?? '',
  }
}
