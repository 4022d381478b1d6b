/**
 * The reads of a data export (export.ts): the signed-in person's rows in other modules' tables,
 * read only, a page at a time by keyset, so an export costs the same at any size. What belongs to
 * other people is read as ids and usernames only.
 */
import type { Db } from '../../db/database.js'

/** The personal and group chats the user is in, by chat id (chat_members_user). */
export function chatsPage(db: Db, userId: number, afterChatId: number, limit: number) {
  return db
    .selectFrom('chat_members as m')
    .innerJoin('chats as c', 'c.id', 'm.chat_id')
    .leftJoin('users as p', (join) =>
      join.on((eb) =>
        eb.and([
          eb('c.chat_type', '=', 'personal'),
          eb('p.id', '!=', userId),
          eb.or([eb('p.id', '=', eb.ref('c.peer1_id')), eb('p.id', '=', eb.ref('c.peer2_id'))]),
        ]),
      ),
    )
    .select(['c.id as chat_id', 'c.chat_type', 'c.title', 'm.role', 'm.joined_at', 'p.id as peer_id', 'p.username as peer_username'])
    .where('m.user_id', '=', userId)
    .where('m.chat_id', '>', afterChatId)
    .orderBy('m.chat_id')
    .limit(limit)
    .execute()
}

/**
 * The user's own messages in one chat after a seq, in seq order (messages_chat_seq): walking the
 * user's chats this way reads each chat once, where a walk by sender has no index to follow.
 */
export function sentInChatPage(db: Db, userId: number, chatId: number, afterSeq: number, limit: number) {
  return db
    .selectFrom('messages')
    .select([
      'id',
      'chat_id',
      'seq',
      'content',
      'reply_to_id',
      'file_name',
      'file_type',
      'file_size',
      'created_at',
      'edited_at',
      'scheduled_at',
    ])
    .where('chat_id', '=', chatId)
    .where('seq', '>', afterSeq)
    .where('sender_id', '=', userId)
    .where('deleted_for_all', '=', 0)
    .orderBy('seq')
    .limit(limit)
    .execute()
}

/** The chat ids the user is in, after one, by chat id. */
export async function chatIdsPage(db: Db, userId: number, afterChatId: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('chat_members')
    .select('chat_id')
    .where('user_id', '=', userId)
    .where('chat_id', '>', afterChatId)
    .orderBy('chat_id')
    .limit(limit)
    .execute()
  return rows.map((row) => row.chat_id)
}

/** My contacts (contacts_owner_contact), with the name I gave each. */
export function contactsPage(db: Db, userId: number, afterId: number, limit: number) {
  return db
    .selectFrom('contacts as k')
    .innerJoin('users as u', 'u.id', 'k.contact_user_id')
    .select(['k.id', 'k.contact_user_id as user_id', 'u.username', 'k.display_name as custom_name', 'k.created_at'])
    .where('k.owner_id', '=', userId)
    .where('k.id', '>', afterId)
    .orderBy('k.id')
    .limit(limit)
    .execute()
}

/** Whom I blocked, by their id. */
export function blockedPage(db: Db, userId: number, afterUserId: number, limit: number) {
  return db
    .selectFrom('blocked_users as b')
    .innerJoin('users as u', 'u.id', 'b.blocked_user_id')
    .select(['b.blocked_user_id as user_id', 'u.username', 'b.reason', 'b.created_at'])
    .where('b.user_id', '=', userId)
    .where('b.blocked_user_id', '>', afterUserId)
    .orderBy('b.blocked_user_id')
    .limit(limit)
    .execute()
}

/** What I saved (saved_messages_user_id): the message's own fields only when I sent it. */
export function savedPage(db: Db, userId: number, afterId: number, limit: number) {
  return db
    .selectFrom('saved_messages as s')
    .innerJoin('messages as m', 'm.id', 's.message_id')
    .innerJoin('users as u', 'u.id', 'm.sender_id')
    .select([
      's.id',
      's.message_id',
      's.saved_at',
      'm.chat_id',
      'm.sender_id',
      'u.username as sender_username',
      'm.content',
      'm.created_at',
      'm.deleted_for_all',
    ])
    .where('s.user_id', '=', userId)
    .where('s.id', '>', afterId)
    .orderBy('s.id')
    .limit(limit)
    .execute()
}

/** My stories (stories_user_expires), expired ones too while they are kept. */
export function storiesPage(db: Db, userId: number, afterId: number, limit: number) {
  return db
    .selectFrom('stories')
    .select(['id', 'media_type', 'caption', 'privacy_type', 'view_count', 'like_count', 'created_at', 'expires_at'])
    .where('user_id', '=', userId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute()
}

/** My premium orders. */
export function ordersPage(db: Db, userId: number, afterId: number, limit: number) {
  return db
    .selectFrom('premium_orders')
    .selectAll()
    .where('user_id', '=', userId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute()
}
