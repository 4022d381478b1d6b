/** The SQL of stories and their views, likes, reactions and selected viewers. */
import { sql, type Insertable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { StoriesTable, StoryRow } from '../../db/tables.js'
import { storyVisibleTo } from '../../policies/stories.js'

export function insert(db: Db, row: Insertable<StoriesTable>): Promise<StoryRow> {
  return db.insertInto('stories').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function insertAllowed(db: Db, storyId: number, userIds: readonly number[]) {
  if (userIds.length === 0) return
  await db
    .insertInto('story_allowed_users')
    .values(userIds.map((userId) => ({ story_id: storyId, user_id: userId })))
    .execute()
}

export function find(db: Db, id: number): Promise<StoryRow | undefined> {
  return db.selectFrom('stories').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function allowedIds(db: Db, storyId: number): Promise<number[]> {
  const rows = await db.selectFrom('story_allowed_users').select('user_id').where('story_id', '=', storyId).execute()
  return rows.map((r) => r.user_id)
}

/** A story with what one viewer did to it: viewed, liked, their reaction (primary-key lookups). */
function withViewerState(db: Db, viewerId: number) {
  return db
    .selectFrom('stories as s')
    .leftJoin('story_views as v', (join) => join.onRef('v.story_id', '=', 's.id').on('v.viewer_id', '=', viewerId))
    .leftJoin('story_likes as l', (join) => join.onRef('l.story_id', '=', 's.id').on('l.user_id', '=', viewerId))
    .leftJoin('story_reactions as r', (join) => join.onRef('r.story_id', '=', 's.id').on('r.user_id', '=', viewerId))
    .selectAll('s')
    .select(['v.viewed_at as my_viewed_at', 'l.created_at as my_liked_at', 'r.reaction as my_reaction'])
}
export type StoryWithState = NonNullable<Awaited<ReturnType<typeof findWithState>>>

export function findWithState(db: Db, id: number, viewerId: number) {
  return withViewerState(db, viewerId).where('s.id', '=', id).executeTakeFirst()
}

export function activeOf(db: Db, userId: number, viewerId: number, now: number) {
  return withViewerState(db, viewerId).where('s.user_id', '=', userId).where('s.expires_at', '>', now).orderBy('s.id').execute()
}

/**
 * The active stories `viewerId` may see from the people they follow: their contacts and their
 * personal-chat peers, without anyone a block stands between (either way), each story only if its
 * privacy lets the viewer in. The followed authors are probed one by one on (user_id, expires_at),
 * so the cost follows the stories shown, not the table.
 */
export function feedOf(db: Db, viewerId: number, now: number) {
  const followed = db
    .selectFrom('contacts')
    .select('contact_user_id as id')
    .where('owner_id', '=', viewerId)
    .union(
      db
        .selectFrom('chat_members as cm')
        .innerJoin('chats as c', 'c.id', 'cm.chat_id')
        .select(sql<number>`case when c.peer1_id = ${viewerId} then c.peer2_id else c.peer1_id end`.as('id'))
        .where('cm.user_id', '=', viewerId)
        .where('c.chat_type', '=', 'personal'),
    )
  return withViewerState(db, viewerId)
    .where('s.user_id', 'in', followed)
    .where('s.user_id', '!=', viewerId)
    .where('s.expires_at', '>', now)
    .where(storyVisibleTo('s', viewerId))
    .orderBy('s.id')
    .execute()
}

/** Whether `viewerId` may see the story (its expiry aside). */
export async function isVisibleTo(db: Db, storyId: number, viewerId: number): Promise<boolean> {
  const row = await db
    .selectFrom('stories as s')
    .select(storyVisibleTo('s', viewerId).as('visible'))
    .where('s.id', '=', storyId)
    .executeTakeFirst()
  return Boolean(row?.visible)
}

/** Counts a view once per viewer; whether this one counted. */
export async function addView(db: Db, storyId: number, viewerId: number, now: number): Promise<boolean> {
  const added = await db
    .insertInto('story_views')
    .values({ story_id: storyId, viewer_id: viewerId, viewed_at: now })
    .onConflict((oc) => oc.columns(['story_id', 'viewer_id']).doNothing())
    .returning('story_id')
    .executeTakeFirst()
  if (added)
    await db
      .updateTable('stories')
      .set((eb) => ({ view_count: eb('view_count', '+', 1) }))
      .where('id', '=', storyId)
      .execute()
  return added !== undefined
}

/** Likes or unlikes; whether anything changed. */
export async function setLike(db: Db, storyId: number, userId: number, liked: boolean, now: number): Promise<boolean> {
  const changed = liked
    ? await db
        .insertInto('story_likes')
        .values({ story_id: storyId, user_id: userId, created_at: now })
        .onConflict((oc) => oc.columns(['story_id', 'user_id']).doNothing())
        .returning('story_id')
        .executeTakeFirst()
    : await db
        .deleteFrom('story_likes')
        .where('story_id', '=', storyId)
        .where('user_id', '=', userId)
        .returning('story_id')
        .executeTakeFirst()
  if (changed)
    await db
      .updateTable('stories')
      .set((eb) => ({ like_count: eb('like_count', liked ? '+' : '-', 1) }))
      .where('id', '=', storyId)
      .execute()
  return changed !== undefined
}

/** Sets (or with null clears) a user's reaction; whether anything changed. */
export async function setReaction(db: Db, storyId: number, userId: number, reaction: string | null, now: number): Promise<boolean> {
  const current = await db
    .selectFrom('story_reactions')
    .select('reaction')
    .where('story_id', '=', storyId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  if ((current?.reaction ?? null) === reaction) return false
  if (reaction === null) {
    await db.deleteFrom('story_reactions').where('story_id', '=', storyId).where('user_id', '=', userId).execute()
    await db
      .updateTable('stories')
      .set((eb) => ({ reaction_count: eb('reaction_count', '-', 1) }))
      .where('id', '=', storyId)
      .execute()
  } else if (current) {
    await db
      .updateTable('story_reactions')
      .set({ reaction, created_at: now })
      .where('story_id', '=', storyId)
      .where('user_id', '=', userId)
      .execute()
  } else {
    await db.insertInto('story_reactions').values({ story_id: storyId, user_id: userId, reaction, created_at: now }).execute()
    await db
      .updateTable('stories')
      .set((eb) => ({ reaction_count: eb('reaction_count', '+', 1) }))
      .where('id', '=', storyId)
      .execute()
  }
  return true
}

export function counts(db: Db, storyId: number) {
  return db.selectFrom('stories').select(['id', 'view_count', 'like_count', 'reaction_count']).where('id', '=', storyId).executeTakeFirst()
}

/** A page of a story's viewers, newest first, with each one's reaction. */
export function viewers(db: Db, storyId: number, limit: number, offset: number) {
  return db
    .selectFrom('story_views as v')
    .innerJoin('users as u', 'u.id', 'v.viewer_id')
    .leftJoin('story_reactions as r', (join) => join.onRef('r.story_id', '=', 'v.story_id').onRef('r.user_id', '=', 'v.viewer_id'))
    .selectAll('u')
    .select(['v.viewed_at', 'r.reaction'])
    .where('v.story_id', '=', storyId)
    .orderBy('v.viewed_at', 'desc')
    .orderBy('v.viewer_id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()
}

export async function remove(db: Db, id: number): Promise<StoryRow | undefined> {
  return db.deleteFrom('stories').where('id', '=', id).returningAll().executeTakeFirst()
}

/** Whether the user has a story that has not expired. */
export async function hasActive(db: Db, userId: number, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('stories')
    .select('id')
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/**
 * Deletes up to `limit` expired stories (oldest first; their views, likes, reactions and selected
 * viewers go with them) and answers the paths of their media.
 */
export async function deleteExpired(db: Db, now: number, limit: number) {
  const batch = db.selectFrom('stories').select('id').where('expires_at', '<=', now).orderBy('expires_at').limit(limit)
  return db.deleteFrom('stories').where('id', 'in', batch).returning(['id', 'media_path', 'music_path']).execute()
}
