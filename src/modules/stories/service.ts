/**
 * Stories: media posts that live STORY_LIFETIME_SECONDS (24 hours). Who may see one: its author;
 * nobody a block stands between (either way); then its privacy: everyone, the author's contacts,
 * or the users the author selected. The feed shows the active stories of the people a user follows
 * (their contacts and personal-chat peers). An expired story is gone for every reader at once; the
 * cleanup job (cleanup.ts) removes its rows and media later.
 */
import type { AppContext } from '../../context.js'
import type { Db } from '../../db/database.js'
import type { StoryMediaType, StoryPrivacy, StoryRow, UserRow } from '../../db/tables.js'
import { inTransaction, type Outbox } from '../../events/outbox.js'
import { forbidden, notFound, premiumRequired, validationError } from '../../http/errors.js'
import { isSingleEmoji } from '../../lib/emoji.js'
import { iso } from '../../lib/time.js'
import * as blocks from '../../policies/blocks.js'
import * as chats from '../chats/index.js'
import * as contacts from '../contacts/index.js'
import { releaseUploads } from '../files/index.js'
import * as files from '../files/index.js'
import { isPremium, presentPeer, type PeerView } from '../users/index.js'
import { FULL_SIGHT, seer, sightFor } from '../../policies/sight.js'
import { privacyAdmits } from '../../policies/stories.js'
import * as users from '../users/index.js'
import { presentFeedStory, presentV1, type FeedStoryShape, type StoryV1Shape } from './present.js'
import * as repo from './repo.js'
import { offsetOf } from '../../db/page.js'

export interface NewStory {
  media_path: string
  caption?: string
  media_type?: StoryMediaType
  music_path?: string | null
  privacy_type?: StoryPrivacy
  allowed_user_ids?: number[]
}

/** How many viewers the V1 variant lists. */
const V1_VIEWERS = 100

export async function create(ctx: AppContext, me: UserRow, input: NewStory): Promise<FeedStoryShape> {
  const media = await files.requireUploaded(ctx, me.id, input.media_path)
  if (media.file_type !== 'image' && media.file_type !== 'video') {
    throw validationError(`A story is an image or a video; this file is ${article(media.file_type)} ${media.file_type}`)
  }
  const mediaType = input.media_type ?? media.file_type
  if (mediaType !== media.file_type)
    throw validationError(`media_type is ${mediaType}, but the file is ${article(media.file_type)} ${media.file_type}`)
  if (input.music_path) {
    const music = await files.requireUploaded(ctx, me.id, input.music_path)
    if (music.file_type !== 'audio')
      throw validationError(`music_path must be an audio file; this one is ${article(music.file_type)} ${music.file_type}`)
  }
  const privacy = input.privacy_type ?? 'everyone'
  const allowed = await allowedUsers(ctx, me, privacy, input.allowed_user_ids)

  const row = await inTransaction(ctx, async (trx, events) => {
    const story = await repo.insert(trx, {
      user_id: me.id,
      media_path: input.media_path,
      media_type: mediaType,
      caption: input.caption ?? '',
      music_path: input.music_path || null,
      privacy_type: privacy,
      created_at: events.now,
      expires_at: events.now + ctx.config.storyLifetimeSeconds * 1000,
    })
    await repo.insertAllowed(trx, story.id, allowed)
    // one public payload for every follower; my own devices see all of me
    const author = presentPeer(me, events.now)
    const fresh = { ...story, my_viewed_at: null, my_liked_at: null, my_reaction: null }
    const audience = await audienceOf(trx, story, allowed)
    // one payload for every follower (nothing of theirs in it yet), the owner's form for my devices
    if (audience.length > 0) await events.toUsers(audience, 'story.new', { story: presentFeedStory(fresh, 0, author) })
    await events.toUsers([me.id], 'story.new', { story: presentFeedStory(fresh, me.id, presentPeer(me, events.now, FULL_SIGHT)) })
    return story
  })
  return presentFeedStory(
    { ...row, my_viewed_at: null, my_liked_at: null, my_reaction: null },
    me.id,
    presentPeer(me, ctx.clock.now(), FULL_SIGHT),
  )
}

const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a')

/** The users a `selected` story names: existing users other than me; none for other privacies. */
async function allowedUsers(ctx: AppContext, me: UserRow, privacy: StoryPrivacy, ids: number[] | undefined): Promise<number[]> {
  const wanted = [...new Set(ids ?? [])].filter((id) => id !== me.id)
  if (privacy !== 'selected') {
    if (wanted.length > 0) throw validationError('allowed_user_ids is only for privacy_type selected')
    return []
  }
  if (wanted.length === 0) throw validationError('privacy_type selected needs allowed_user_ids: the users who may see the story')
  const found = new Set((await users.findByIds(ctx.db, wanted)).filter((u) => u.deleted_at === null).map((u) => u.id))
  const unknown = wanted.filter((id) => !found.has(id))
  if (unknown.length > 0) throw validationError(`allowed_user_ids: no such user: ${unknown.slice(0, 10).join(', ')}`)
  return wanted
}

/**
 * Who hears of a story: the author's followers (who have them as a contact, or share a personal
 * chat with them) whom its privacy lets in, without anyone a block stands between.
 */
async function audienceOf(db: Db, story: StoryRow, allowed?: readonly number[]): Promise<number[]> {
  const author = story.user_id
  const followers = new Set([...(await contacts.ownersOf(db, author)), ...(await chats.personalPeers(db, author))])
  followers.delete(author)
  for (const id of await blocks.blockedAround(db, author)) followers.delete(id)
  const privacy = story.privacy_type
  const kept = privacy === 'contacts' ? new Set(await contacts.contactIds(db, author)) : EMPTY
  const selected = privacy === 'selected' ? new Set(allowed ?? (await repo.allowedIds(db, story.id))) : EMPTY
  return [...followers].filter((id) => privacyAdmits(privacy, { isContact: kept.has(id), isSelected: selected.has(id) }))
}

const EMPTY: ReadonlySet<number> = new Set()

/** Whether `viewerId` may see the story (its expiry aside). */
async function maySee(db: Db, story: StoryRow, viewerId: number): Promise<boolean> {
  return story.user_id === viewerId || repo.isVisibleTo(db, story.id, viewerId)
}

const STORY_NOT_FOUND = 'Story not found'

/** The active story with my state on it; 404 when it is missing, expired or not for me (never telling which). */
async function visible(ctx: AppContext, me: UserRow, id: number): Promise<repo.StoryWithState> {
  const row = await active(ctx, me, id)
  if (!(await maySee(ctx.db, row, me.id))) throw notFound(STORY_NOT_FOUND)
  return row
}

async function active(ctx: AppContext, me: UserRow, id: number): Promise<repo.StoryWithState> {
  const row = await repo.findWithState(ctx.db, id, me.id)
  if (!row || row.expires_at <= ctx.clock.now()) throw notFound(STORY_NOT_FOUND)
  return row
}

async function authorOf(ctx: AppContext, me: UserRow, story: StoryRow): Promise<PeerView> {
  const now = ctx.clock.now()
  if (story.user_id === me.id) return presentPeer(me, now, FULL_SIGHT)
  const author = await users.getUser(ctx, story.user_id)
  return presentPeer(author, now, await sightFor(ctx.db, me.id, author))
}

export async function get(ctx: AppContext, me: UserRow, id: number): Promise<FeedStoryShape> {
  const row = await visible(ctx, me, id)
  return presentFeedStory(row, me.id, await authorOf(ctx, me, row))
}

/**
 * My active stories first (oldest first), then those of the people I follow, grouped by author:
 * authors with a story I have not seen first, then by their newest story.
 */
export async function feed(ctx: AppContext, me: UserRow): Promise<FeedStoryShape[]> {
  const now = ctx.clock.now()
  const [own, others] = await Promise.all([repo.activeOf(ctx.db, me.id, me.id, now), repo.feedOf(ctx.db, me.id, now)])
  const byAuthor = new Map<number, repo.StoryWithState[]>()
  for (const row of others) {
    const list = byAuthor.get(row.user_id)
    if (list) list.push(row)
    else byAuthor.set(row.user_id, [row])
  }
  const authorRows = await users.findByIds(ctx.db, [...byAuthor.keys()])
  const see = await seer(ctx.db, me.id, authorRows)
  const authors = new Map(authorRows.map((user) => [user.id, presentPeer(user, now, see(user))]))
  const groups = [...byAuthor.values()]
    .map((rows) => ({ rows, unseen: rows.some((row) => row.my_viewed_at === null), newest: rows[rows.length - 1].id }))
    .sort((a, b) => Number(b.unseen) - Number(a.unseen) || b.newest - a.newest)
  const mine = presentPeer(me, now, FULL_SIGHT)
  return [
    ...own.map((row) => presentFeedStory(row, me.id, mine)),
    ...groups.flatMap((group) => group.rows.map((row) => presentFeedStory(row, me.id, authors.get(row.user_id)!))),
  ]
}

export async function remove(ctx: AppContext, me: UserRow, id: number) {
  const row = await visible(ctx, me, id)
  if (row.user_id !== me.id) throw forbidden('Only its author may delete a story')
  const removed = await inTransaction(ctx, async (trx, events) => {
    // its audience is read before the selected viewers go with it
    const audience = await audienceOf(trx, row)
    const story = await repo.remove(trx, id)
    if (!story) return null
    await events.toUsers([me.id, ...audience], 'story.deleted', { story_id: id, user_id: me.id })
    return story
  })
  if (!removed) throw notFound(STORY_NOT_FOUND)
  await releaseUploads(ctx, [removed.media_path, ...(removed.music_path ? [removed.music_path] : [])])
  return { story_id: id, deleted: true }
}

/**
 * Registers my view (once; the author's own does not count) and tells the owner the new counts.
 * A story not shared with me is refused as GET refuses it: 404, the same as a missing id, so the
 * answer does not tell which story ids exist.
 */
export async function view(ctx: AppContext, me: UserRow, id: number): Promise<FeedStoryShape> {
  const row = await visible(ctx, me, id)
  if (row.user_id !== me.id) {
    await inTransaction(ctx, async (trx, events) => {
      if (await repo.addView(trx, id, me.id, events.now)) await tellOwner(trx, events, row.user_id, id)
    })
  }
  return get(ctx, me, id)
}

export async function setLike(ctx: AppContext, me: UserRow, id: number, liked: boolean): Promise<FeedStoryShape> {
  const row = await visible(ctx, me, id)
  await inTransaction(ctx, async (trx, events) => {
    if ((await repo.setLike(trx, id, me.id, liked, events.now)) && row.user_id !== me.id) await tellOwner(trx, events, row.user_id, id)
  })
  return get(ctx, me, id)
}

/** Sets my reaction (one emoji), or clears it with null or "". */
export async function react(ctx: AppContext, me: UserRow, id: number, reaction: string | null): Promise<FeedStoryShape> {
  const value = reaction === null || reaction === '' ? null : reaction
  if (value !== null && !isSingleEmoji(value)) throw validationError('reaction must be one emoji (or null to clear it)')
  const row = await visible(ctx, me, id)
  await inTransaction(ctx, async (trx, events) => {
    if ((await repo.setReaction(trx, id, me.id, value, events.now)) && row.user_id !== me.id) await tellOwner(trx, events, row.user_id, id)
  })
  return get(ctx, me, id)
}

async function tellOwner(db: Db, events: Outbox, ownerId: number, storyId: number) {
  const counts = await repo.counts(db, storyId)
  if (!counts) return
  await events.toUsers([ownerId], 'story.viewed', {
    story_id: storyId,
    view_count: counts.view_count,
    like_count: counts.like_count,
    reaction_count: counts.reaction_count,
  })
}

/** Who viewed my story, newest first, with their reactions: the owner's, and a premium feature. */
export async function viewers(ctx: AppContext, me: UserRow, id: number, page: number, perPage: number) {
  const row = await visible(ctx, me, id)
  if (row.user_id !== me.id) throw forbidden("Only its author sees a story's viewers")
  const now = ctx.clock.now()
  if (!isPremium(me, now)) throw premiumRequired("A story's viewer list is a Tern Premium feature")
  const rows = await repo.viewers(ctx.db, id, perPage, offsetOf(page, perPage))
  const see = await seer(ctx.db, me.id, rows, await blocks.blockedAround(ctx.db, me.id))
  return {
    items: rows.map((viewer) => ({
      user: presentPeer(viewer, now, see(viewer)),
      viewed_at: iso(viewer.viewed_at),
      reaction: viewer.reaction,
    })),
    total: row.view_count,
  }
}

// ---------------------------------------------------------------- the V1 variant

export async function feedV1(ctx: AppContext, me: UserRow): Promise<StoryV1Shape[]> {
  const items = await feed(ctx, me)
  return Promise.all(items.map((item) => toV1(ctx, me, item)))
}

export async function getV1(ctx: AppContext, me: UserRow, id: number): Promise<StoryV1Shape> {
  return toV1(ctx, me, await get(ctx, me, id))
}

/** The V1 shape of a story I see: its viewers only for me, its owner, and only with premium. */
async function toV1(ctx: AppContext, me: UserRow, story: FeedStoryShape): Promise<StoryV1Shape> {
  const now = ctx.clock.now()
  const viewerRows = story.user_id === me.id && isPremium(me, now) ? await repo.viewers(ctx.db, story.story_id, V1_VIEWERS, 0) : []
  const see = await seer(ctx.db, me.id, viewerRows, viewerRows.length ? await blocks.blockedAround(ctx.db, me.id) : undefined)
  return presentV1(
    story,
    viewerRows.map((viewer) => presentPeer(viewer, now, see(viewer))),
  )
}

/** Whether the user has an active story (the fuller Peer's has_story). */
export const hasActive = (ctx: AppContext, userId: number) => repo.hasActive(ctx.db, userId, ctx.clock.now())
