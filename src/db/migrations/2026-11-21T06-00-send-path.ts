import { sql, type Kysely } from 'kysely'

/**
 * The idempotency index (sender, client_message_id) held a row for every message, though most
 * sends carry no client id: it becomes partial, so a send without one writes one index fewer.
 * Lookups by `client_message_id = ?` imply it is not null and still use it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('messages_client_id').execute()
  await db.schema
    .createIndex('messages_client_id')
    .unique()
    .on('messages')
    .columns(['sender_id', 'client_message_id'])
    .where(sql.ref('client_message_id'), 'is not', null)
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('messages_client_id').execute()
  await db.schema.createIndex('messages_client_id').unique().on('messages').columns(['sender_id', 'client_message_id']).execute()
}
