import type { Db } from '../../db/database.js'
import { paged } from '../../db/page.js'

/** Saves (idempotently) and returns the saved row, the first one when it was already saved. */
export async function save(db: Db, userId: number, messageId: number, now: number) {
  await db
    .insertInto('saved_messages')
    .values({ user_id: userId, message_id: messageId, saved_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'message_id']).doNothing())
    .execute()
  return db
    .selectFrom('saved_messages')
    .selectAll()
    .where('user_id', '=', userId)
    .where('message_id', '=', messageId)
    .executeTakeFirstOrThrow()
}

export async function unsave(db: Db, userId: number, messageId: number): Promise<boolean> {
  const result = await db.deleteFrom('saved_messages').where('user_id', '=', userId).where('message_id', '=', messageId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/**
 * The saved messages the user may still read: not deleted for all or hidden by them, and in a
 * chat they are a member of, or a public group or channel (chats.requireReader's rule). A saved
 * message of a chat they left or were removed from is not shown (nor its later edits and
 * reactions); it is shown again if they may read the chat again.
 */
function visibleSaved(db: Db, userId: number) {
  return db
    .selectFrom('saved_messages as sv')
    .innerJoin('messages as m', 'm.id', 'sv.message_id')
    .where('sv.user_id', '=', userId)
    .where('m.deleted_for_all', '=', 0)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('message_hidden as h').select('h.message_id').where('h.user_id', '=', userId).whereRef('h.message_id', '=', 'm.id'),
        ),
      ),
    )
    .where(({ or, exists, selectFrom }) =>
      or([
        exists(
          selectFrom('chat_members as cm').select('cm.chat_id').whereRef('cm.chat_id', '=', 'm.chat_id').where('cm.user_id', '=', userId),
        ),
        exists(
          selectFrom('chats as c')
            .select('c.id')
            .whereRef('c.id', '=', 'm.chat_id')
            .where('c.chat_type', '!=', 'personal')
            .where('c.is_public', '=', 1),
        ),
      ]),
    )
}

export async function list(db: Db, userId: number, page: number, perPage: number) {
  const [rows, count] = await Promise.all([
    visibleSaved(db, userId)
      .innerJoin('users as s', 's.id', 'm.sender_id')
      .selectAll('m')
      .select(['sv.saved_at', 's.username as sender_username', 's.avatar as sender_avatar', 's.privacy_avatar as sender_privacy_avatar'])
      .orderBy('sv.id', 'desc')
      .$call(paged(page, perPage))
      .execute(),
    visibleSaved(db, userId)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}
