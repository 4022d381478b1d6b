import { sql } from 'kysely'
import type { Db } from '../../db/database.js'
import { bump } from '../../db/counters.js'

/** A group or channel with what its shapes show: the viewer's role, last message, owner, discussion group. */
export function findView(db: Db, chatId: number, viewerId: number) {
  return db
    .selectFrom('chats as c')
    .leftJoin('chat_members as me', (j) => j.onRef('me.chat_id', '=', 'c.id').on('me.user_id', '=', viewerId))
    .leftJoin('messages as lm', (j) => j.onRef('lm.id', '=', 'c.last_message_id').on('lm.deleted_for_all', '=', 0))
    .leftJoin('users as ls', 'ls.id', 'lm.sender_id')
    .leftJoin('users as o', 'o.id', 'c.owner_id')
    .leftJoin('channel_binds as b', 'b.channel_id', 'c.id')
    .selectAll('c')
    .select([
      'me.role as my_role',
      'lm.id as lm_id',
      'lm.content as lm_content',
      'lm.sender_id as lm_sender_id',
      'lm.created_at as lm_created_at',
      'ls.username as lm_sender_username',
      'o.username as owner_username',
      'b.group_id as discussion_group_id',
    ])
    .where('c.id', '=', chatId)
    .where('c.chat_type', '<>', 'personal')
    .executeTakeFirst()
}
export type ChatView = NonNullable<Awaited<ReturnType<typeof findView>>>

/** Inserts a group or channel (a channel is counted in the statistics); run it in a transaction. */
export async function insertChat(
  db: Db,
  values: {
    chat_type: 'group' | 'channel'
    title: string
    description: string
    avatar: string | null
    is_public: number
    owner: number
    code: string
    now: number
  },
) {
  if (values.chat_type === 'channel') await bump(db, 'channels', 1)
  return db
    .insertInto('chats')
    .values({
      chat_type: values.chat_type,
      title: values.title,
      description: values.description,
      avatar: values.avatar,
      is_public: values.is_public,
      created_by: values.owner,
      owner_id: values.owner,
      invite_code: values.code,
      last_message_at: values.now,
      created_at: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Serializes membership changes of one chat (a row lock in PostgreSQL; SQLite has one writer). */
/** The groups and channels a user owns. */
export function ownedBy(db: Db, userId: number) {
  return db
    .selectFrom('chats')
    .select(['id', 'chat_type'])
    .where('owner_id', '=', userId)
    .where('chat_type', 'in', ['group', 'channel'])
    .orderBy('id')
    .execute()
}

export async function lockChat(db: Db, chatId: number) {
  await db.updateTable('chats').set({ join_seq: sql`join_seq` }).where('id', '=', chatId).execute()
}

export async function updateChat(
  db: Db,
  chatId: number,
  changes: {
    title?: string
    avatar?: string | null
    description?: string
    owner_id?: number
    is_forum?: number
    is_verified?: number
    invite_code?: string
  },
) {
  await db.updateTable('chats').set(changes).where('id', '=', chatId).execute()
}

/** Deletes a group or channel (a channel leaves the statistics' count); run it in a transaction. */
export async function deleteChat(db: Db, chatId: number) {
  const gone = await db.deleteFrom('chats').where('id', '=', chatId).returning('chat_type').executeTakeFirst()
  if (gone?.chat_type === 'channel') await bump(db, 'channels', -1)
}

export function insertInvite(
  db: Db,
  values: { chat_id: number; code: string; created_by: number; usage_limit: number | null; expires_at: number | null; now: number },
) {
  return db
    .insertInto('invite_links')
    .values({
      chat_id: values.chat_id,
      code: values.code,
      created_by: values.created_by,
      usage_limit: values.usage_limit,
      expires_at: values.expires_at,
      created_at: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function findInvite(db: Db, code: string) {
  return db.selectFrom('invite_links').selectAll().where('code', '=', code).executeTakeFirst()
}

export function listInvites(db: Db, chatId: number) {
  return db.selectFrom('invite_links').selectAll().where('chat_id', '=', chatId).orderBy('id', 'desc').limit(100).execute()
}

/**
 * Takes one use of a link, atomically: only while it is not revoked, not expired and under its
 * limit, so two joins racing for the last use cannot both pass. Whether it was taken.
 */
export async function takeInviteUse(db: Db, inviteId: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('invite_links')
    .set({ uses: sql`uses + 1` })
    .where('id', '=', inviteId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb.or([eb('usage_limit', 'is', null), eb('uses', '<', eb.ref('usage_limit'))]))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function revokeInvite(db: Db, chatId: number, code: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('invite_links')
    .set({ revoked_at: now })
    .where('chat_id', '=', chatId)
    .where('code', '=', code)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}
