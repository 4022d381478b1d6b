import { sql, type Expression } from 'kysely'
import type { Db } from '../../db/database.js'
import { isPostgres } from '../../db/dialect.js'
import { paged } from '../../db/page.js'

export function findById(db: Db, chatId: number) {
  return db.selectFrom('chats').selectAll().where('id', '=', chatId).executeTakeFirst()
}

export async function topicInChat(db: Db, topicId: number, chatId: number): Promise<boolean> {
  const row = await db.selectFrom('group_topics').select('id').where('id', '=', topicId).where('chat_id', '=', chatId).executeTakeFirst()
  return row !== undefined
}

export function findPersonal(db: Db, peer1: number, peer2: number) {
  return db.selectFrom('chats').selectAll().where('peer1_id', '=', peer1).where('peer2_id', '=', peer2).executeTakeFirst()
}

export function insertPersonal(db: Db, peer1: number, peer2: number, now: number) {
  return db
    .insertInto('chats')
    .values({ chat_type: 'personal', peer1_id: peer1, peer2_id: peer2, created_at: now })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** A new personal chat's one or two members (groups and channels add theirs through members.ts). */
export async function insertPersonalMembers(db: Db, chatId: number, userIds: number[], now: number) {
  await db
    .insertInto('chat_members')
    .values(userIds.map((userId, i) => ({ chat_id: chatId, user_id: userId, joined_at: now, last_activity_at: now, position: i + 1 })))
    .execute()
  await db.updateTable('chats').set({ member_count: userIds.length, join_seq: userIds.length }).where('id', '=', chatId).execute()
}

/** The chat, if `userId` is a member of it. */
export function findForMember(db: Db, chatId: number, userId: number) {
  return db
    .selectFrom('chats as c')
    .innerJoin('chat_members as m', (j) => j.onRef('m.chat_id', '=', 'c.id').on('m.user_id', '=', userId))
    .selectAll('c')
    .select(['m.role', 'm.read_seq', 'm.read_at'])
    .where('c.id', '=', chatId)
    .executeTakeFirst()
}

/**
 * Locks the chat's row for the transaction (PostgreSQL; SQLite has one writer at a time): a
 * change to a message of a group or channel takes it before the message's row (messages/actions.ts).
 */
export async function lockChat(db: Db, chatId: number) {
  if (isPostgres(db)) await db.selectFrom('chats').select('id').where('id', '=', chatId).forNoKeyUpdate().execute()
}

/** Takes the chat's next message seq (atomic in both dialects). */
export async function nextMessageSeq(db: Db, chatId: number, now: number): Promise<number> {
  const row = await db
    .updateTable('chats')
    .set({ message_seq: sql`message_seq + 1`, last_message_at: now })
    .where('id', '=', chatId)
    .returning('message_seq')
    .executeTakeFirstOrThrow()
  return row.message_seq
}

export async function setLastMessage(db: Db, chatId: number, messageId: number) {
  await db.updateTable('chats').set({ last_message_id: messageId }).where('id', '=', chatId).execute()
}

export async function refreshLastMessage(db: Db, chatId: number): Promise<number | null> {
  const latest = await db
    .selectFrom('messages')
    .select('id')
    .where('chat_id', '=', chatId)
    .where('deleted_for_all', '=', 0)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst()
  await db
    .updateTable('chats')
    .set({ last_message_id: latest?.id ?? null })
    .where('id', '=', chatId)
    .execute()
  return latest?.id ?? null
}

/**
 * After a message: every member's chat moves to the top of their list, and the sender has read up
 * to it. One statement over the chat's member rows, so only for chats with a handful of members
 * (personal chats); large groups need a list order that does not write per member.
 */
export async function touchMembers(db: Db, chatId: number, senderId: number, seq: number, now: number) {
  const advances = sql<boolean>`user_id = ${senderId} and read_seq < ${seq}`
  await db
    .updateTable('chat_members')
    .set({
      last_activity_at: now,
      read_seq: sql`case when ${advances} then ${seq} else read_seq end`,
      read_at: sql`case when ${advances} then ${now} else read_at end`,
    })
    .where('chat_id', '=', chatId)
    .execute()
}

/** A member's read position (0 if not a member). */
export async function readSeqOf(db: Db, chatId: number, userId: number): Promise<number> {
  const row = await db
    .selectFrom('chat_members')
    .select('read_seq')
    .where('chat_id', '=', chatId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return row?.read_seq ?? 0
}

/** Moves a member's read position forward (never back); returns whether it moved. */
export async function advanceRead(db: Db, chatId: number, userId: number, seq: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('chat_members')
    .set({ read_seq: seq, read_at: now })
    .where('chat_id', '=', chatId)
    .where('user_id', '=', userId)
    .where('read_seq', '<', seq)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Deleted-for-all messages after a read position: served by the partial messages_deleted_for_all index. */
function deletedUnread(chatId: Expression<number>, readSeq: Expression<number>) {
  return sql<number>`(select count(*) from messages d where d.chat_id = ${chatId} and d.deleted_for_all = 1 and d.seq > ${readSeq})`
}

/** How many messages of a chat a member has not read (deleted-for-all ones excluded). */
export async function unreadCount(db: Db, chatId: number, userId: number): Promise<number> {
  const row = await db
    .selectFrom('chat_members as me')
    .innerJoin('chats as c', 'c.id', 'me.chat_id')
    .select(['c.message_seq', 'me.read_seq', (eb) => deletedUnread(eb.ref('c.id'), eb.ref('me.read_seq')).as('deleted_unread')])
    .where('me.chat_id', '=', chatId)
    .where('me.user_id', '=', userId)
    .executeTakeFirst()
  return row ? Math.max(0, row.message_seq - row.read_seq - Number(row.deleted_unread)) : 0
}

/** A user's personal chat list items: the peer, the last message and both read positions. */
function personalItems(db: Db, userId: number) {
  return db
    .selectFrom('chat_members as me')
    .innerJoin('chats as c', 'c.id', 'me.chat_id')
    .innerJoin('users as p', (j) =>
      j.on((eb) => eb('p.id', '=', eb.case().when('c.peer1_id', '=', userId).then(eb.ref('c.peer2_id')).else(eb.ref('c.peer1_id')).end())),
    )
    .leftJoin('chat_members as pm', (j) => j.onRef('pm.chat_id', '=', 'c.id').onRef('pm.user_id', '=', 'p.id'))
    .leftJoin('messages as lm', 'lm.id', 'c.last_message_id')
    .selectAll('p')
    .select([
      'c.id as chat_id',
      'c.message_seq',
      'c.created_at as chat_created_at',
      'c.last_message_at',
      'me.read_seq as my_read_seq',
      'me.last_activity_at as my_activity_at',
      'pm.read_seq as peer_read_seq',
      'lm.id as lm_id',
      'lm.seq as lm_seq',
      'lm.content as lm_content',
      'lm.sender_id as lm_sender_id',
      'lm.created_at as lm_created_at',
      'lm.deleted_for_all as lm_deleted_for_all',
      (eb) => deletedUnread(eb.ref('c.id'), eb.ref('me.read_seq')).as('deleted_unread'),
    ])
    .where('me.user_id', '=', userId)
    .where('c.chat_type', '=', 'personal')
}

export type PersonalItemRow = NonNullable<Awaited<ReturnType<typeof findPersonalItem>>>

export function findPersonalItem(db: Db, userId: number, chatId: number) {
  return personalItems(db, userId).where('c.id', '=', chatId).executeTakeFirst()
}

/**
 * Which of a user's chats a list shows: the main list leaves out archived and pinned chats (the
 * pinned ones come first, on their own), the archive shows only archived ones.
 */
export type ListView = 'main' | 'archived'

const archivedByMe = sql`exists (select 1 from archived_chats ac where ac.user_id = me.user_id and ac.chat_id = me.chat_id)`
const pinnedByMe = sql`exists (select 1 from pinned_chats pc where pc.user_id = me.user_id and pc.chat_id = me.chat_id)`
/** The filter of a view, on a query over the user's memberships `me` (primary-key probes). */
const inView = (view: ListView) =>
  view === 'archived' ? sql<boolean>`${archivedByMe}` : sql<boolean>`not ${archivedByMe} and not ${pinnedByMe}`

/** One page of a user's personal chats in a view, most recent activity first. */
export async function listPersonal(db: Db, userId: number, page: number, perPage: number, view: ListView = 'main') {
  const [rows, count] = await Promise.all([
    personalItems(db, userId)
      .where(inView(view))
      // served by chat_members_user_activity: a page costs O(page), however many chats
      .orderBy('me.last_activity_at', 'desc')
      .orderBy('me.chat_id', 'desc')
      .$call(paged(page, perPage))
      .execute(),
    db
      .selectFrom('chat_members as me')
      .innerJoin('chats as c', 'c.id', 'me.chat_id')
      .where('me.user_id', '=', userId)
      .where('c.chat_type', '=', 'personal')
      .where(inView(view))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** The user's pinned chats they are still in, most recently pinned first. */
export function listPinned(db: Db, userId: number) {
  return db
    .selectFrom('pinned_chats as pc')
    .innerJoin('chat_members as me', (join) => join.onRef('me.chat_id', '=', 'pc.chat_id').onRef('me.user_id', '=', 'pc.user_id'))
    .innerJoin('chats as c', 'c.id', 'pc.chat_id')
    .select(['pc.chat_id', 'pc.pinned_at', 'c.chat_type'])
    .where('pc.user_id', '=', userId)
    .orderBy('pc.pinned_at', 'desc')
    .orderBy('pc.chat_id', 'desc')
    .execute()
}

export async function pin(db: Db, userId: number, chatId: number, now: number) {
  await db
    .insertInto('pinned_chats')
    .values({ user_id: userId, chat_id: chatId, pinned_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'chat_id']).doNothing())
    .execute()
}

export async function unpin(db: Db, userId: number, chatId: number): Promise<boolean> {
  const result = await db.deleteFrom('pinned_chats').where('user_id', '=', userId).where('chat_id', '=', chatId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

export async function archive(db: Db, userId: number, chatId: number, now: number) {
  await db
    .insertInto('archived_chats')
    .values({ user_id: userId, chat_id: chatId, archived_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'chat_id']).doNothing())
    .execute()
}

export async function unarchive(db: Db, userId: number, chatId: number): Promise<boolean> {
  const result = await db.deleteFrom('archived_chats').where('user_id', '=', userId).where('chat_id', '=', chatId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** Locks the user's row for a pin (PostgreSQL: pins of one user take turns, so the limit holds). */
export async function lockUser(db: Db, userId: number) {
  await db.updateTable('users').set({ id: sql`id` }).where('id', '=', userId).execute()
}

/** How many groups (not channels) the user is a member of. */
export async function countGroups(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('chat_members as m')
    .innerJoin('chats as c', 'c.id', 'm.chat_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('m.user_id', '=', userId)
    .where('c.chat_type', '=', 'group')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The other members of a user's personal chats (not the user themselves). */
export async function personalPeers(db: Db, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('chat_members as me')
    .innerJoin('chats as c', 'c.id', 'me.chat_id')
    .select(['c.peer1_id', 'c.peer2_id'])
    .where('me.user_id', '=', userId)
    .where('c.chat_type', '=', 'personal')
    .execute()
  return rows.map((r) => (r.peer1_id === userId ? r.peer2_id! : r.peer1_id!)).filter((id) => id !== userId)
}

/** When a group or channel was last active for a member: its last message, or their joining if later. */
const groupActivity = sql<number>`case when c.last_message_at > me.joined_at then c.last_message_at else me.joined_at end`

/**
 * A user's groups and channels for the chat list, most recent activity first, at most `limit`.
 * Their order comes from the chat row (no per-member write on a message), so this reads all of
 * the user's group and channel memberships: O(groups joined), not O(chats).
 */
export async function listGroups(db: Db, userId: number, limit: number, view: ListView | { chatIds: number[] } = 'main') {
  const base = db
    .selectFrom('chat_members as me')
    .innerJoin('chats as c', 'c.id', 'me.chat_id')
    .where('me.user_id', '=', userId)
    .where('c.chat_type', '<>', 'personal')
    .where(typeof view === 'string' ? inView(view) : sql<boolean>`me.chat_id in (${sql.join(view.chatIds.length ? view.chatIds : [0])})`)
  const [rows, count] = await Promise.all([
    base
      .leftJoin('messages as lm', 'lm.id', 'c.last_message_id')
      .leftJoin('users as ls', 'ls.id', 'lm.sender_id')
      .select([
        'c.id as chat_id',
        'c.chat_type',
        'c.title',
        'c.avatar',
        'c.message_seq',
        'c.event_seq',
        'c.is_verified',
        'me.role',
        'me.read_seq as my_read_seq',
        'lm.id as lm_id',
        'lm.seq as lm_seq',
        'lm.content as lm_content',
        'lm.sender_id as lm_sender_id',
        'lm.created_at as lm_created_at',
        'lm.deleted_for_all as lm_deleted_for_all',
        'lm.read_at as lm_read_at',
        'ls.username as lm_sender_username',
        groupActivity.as('activity_at'),
        (eb) => deletedUnread(eb.ref('c.id'), eb.ref('me.read_seq')).as('deleted_unread'),
      ])
      .orderBy(groupActivity, 'desc')
      .orderBy('c.id', 'desc')
      .limit(limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows: rows.map((r) => ({ ...r, activity_at: Number(r.activity_at) })), total: Number(count.n) }
}
export type GroupItemRow = Awaited<ReturnType<typeof listGroups>>['rows'][number]
