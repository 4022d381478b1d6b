import { sql, type Kysely } from 'kysely'

/**
 * A retried scheduled send (same sender and client_message_id) must find the first one, as a
 * retried immediate send does, so pending messages get the same partial unique index as
 * `messages`. Before it, a retry made a second pending row. Those rows are removed first: a later
 * duplicate of a pending row, and a pending row whose client id already names a delivered message
 * (it would fail on `messages_client_id` when it came due).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db
    .deleteFrom('scheduled_messages as s')
    .where('s.client_message_id', 'is not', null)
    .where((eb) =>
      eb.or([
        eb.exists(
          eb
            .selectFrom('scheduled_messages as t')
            .select(sql.lit(1).as('one'))
            .whereRef('t.sender_id', '=', 's.sender_id')
            .whereRef('t.client_message_id', '=', 's.client_message_id')
            .whereRef('t.id', '<', 's.id'),
        ),
        eb.exists(
          eb
            .selectFrom('messages as m')
            .select(sql.lit(1).as('one'))
            .whereRef('m.sender_id', '=', 's.sender_id')
            .whereRef('m.client_message_id', '=', 's.client_message_id'),
        ),
      ]),
    )
    .execute()
  await db.schema
    .createIndex('scheduled_messages_client_id')
    .unique()
    .on('scheduled_messages')
    .columns(['sender_id', 'client_message_id'])
    .where(sql.ref('client_message_id'), 'is not', null)
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('scheduled_messages_client_id').execute()
}
