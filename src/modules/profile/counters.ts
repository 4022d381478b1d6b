/** The counters of the fuller Peer shape, each from the module that owns it. */
import type { AppContext } from '../../context.js'
import * as chats from '../chats/index.js'
import * as contacts from '../contacts/index.js'
import * as stories from '../stories/index.js'
import type { PeerCounters } from '../users/index.js'

/**
 * has_story: an active story; following: my contacts; followers: who has me as a contact;
 * groups: the groups I am a member of (channels not counted).
 */
export async function countersFor(ctx: AppContext, userId: number): Promise<PeerCounters> {
  const [hasStory, follows, groups] = await Promise.all([
    stories.hasActive(ctx, userId),
    contacts.counts(ctx.db, userId),
    chats.countGroups(ctx.db, userId),
  ])
  return { has_story: hasStory, followers_count: follows.followers, following_count: follows.following, groups_count: groups }
}
