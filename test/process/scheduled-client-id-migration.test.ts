/**
 * 2026-11-23T00-00-scheduled-client-id: pending messages get a unique (sender, client id). Rows a
 * retried scheduled send duplicated before it are removed first: a later copy of a pending row,
 * and a pending row whose client id already names a delivered message. Others stay untouched.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { migrationDatabase, plantUsers } from '../harness/migrations.js'

const BEFORE = '2026-11-21T08-00-sqlite-seq-from-log'
const { db, migrator } = await migrationDatabase()

test('duplicate pending rows go, the rest stay, and a second pending row with the same client id is refused', async () => {
  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  const now = Date.now()
  const [ann, ben] = await plantUsers(db, ['ann', 'ben'], now)
  const chat = await db
    .insertInto('chats')
    .values({ chat_type: 'personal', peer1_id: ann, peer2_id: ben, created_at: now } as never)
    .returning('id')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('messages')
    .values({
      chat_id: chat.id,
      seq: 1,
      sender_id: ann,
      receiver_id: ben,
      content: 'sent',
      client_message_id: 'delivered',
      created_at: now,
    } as never)
    .execute()
  const pending = (sender: number, clientId: string | null, content: string) => ({
    chat_id: chat.id,
    sender_id: sender,
    payload: JSON.stringify({ content }),
    client_message_id: clientId,
    scheduled_at: now + 60_000,
    created_at: now,
  })
  await db
    .insertInto('scheduled_messages')
    .values([
      pending(ann, 'twice', 'first'),
      pending(ann, 'twice', 'retry'),
      pending(ann, 'delivered', 'already sent'),
      pending(ben, 'twice', 'another sender'),
      pending(ann, null, 'no id'),
      pending(ann, null, 'no id either'),
    ] as never)
    .execute()

  assert.equal((await migrator.migrateToLatest()).error, undefined)
  const left = await db.selectFrom('scheduled_messages').select(['sender_id', 'client_message_id', 'payload']).orderBy('id').execute()
  const contents = left.map((row) => [
    row.sender_id,
    row.client_message_id,
    (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload).content,
  ])
  assert.deepEqual(contents, [
    [ann, 'twice', 'first'],
    [ben, 'twice', 'another sender'],
    [ann, null, 'no id'],
    [ann, null, 'no id either'],
  ])
  await assert.rejects(
    db
      .insertInto('scheduled_messages')
      .values(pending(ann, 'twice', 'again') as never)
      .execute(),
  )
  await db
    .insertInto('scheduled_messages')
    .values(pending(ann, null, 'no id, once more') as never)
    .execute()

  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  await db
    .insertInto('scheduled_messages')
    .values(pending(ann, 'twice', 'allowed again going down') as never)
    .execute()
})
