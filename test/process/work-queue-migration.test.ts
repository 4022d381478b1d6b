/**
 * 2026-12-08T00-00-work-queue: the waiting work is carried into the one queue. Each pending
 * scheduled message gets its item at its time, each push_queue row becomes a push item (the newest
 * message, the count, the attempts and the due time kept), each webhook lane with pending
 * deliveries gets one item at its head, and unfinished broadcasts one item; finished work gets
 * none (the negative beside each). Down brings push_queue back.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql, type Kysely } from 'kysely'
import { migrationDatabase, plantUsers } from '../harness/migrations.js'

const BEFORE = '2026-12-07T19-10-referral-shares'
const { db: typed, migrator } = await migrationDatabase()
// the tables as they were before the migration, not as src/db/tables.ts has them now
const db = typed as unknown as Kysely<any>

test('scheduled messages, pushes, webhook lanes and unfinished broadcasts waiting before the upgrade are in the queue after it', async () => {
  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  const now = Date.now()
  const [ann, ben, bot] = await plantUsers(db, ['ann', 'ben', 'hookbot'], now)
  const chat = await db
    .insertInto('chats')
    .values({ chat_type: 'personal', peer1_id: ann, peer2_id: ben, created_at: now })
    .returning('id')
    .executeTakeFirstOrThrow()
  const pending = await db
    .insertInto('scheduled_messages')
    .values({
      chat_id: chat.id,
      sender_id: ann,
      payload: JSON.stringify({ content: 'later' }),
      client_message_id: null,
      scheduled_at: now + 60_000,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('push_queue')
    .values({
      user_id: ben,
      chat_id: chat.id,
      message_id: 42,
      kind: 'mention',
      count: 3,
      attempts: 2,
      due_at: now + 5000,
      created_at: now - 1000,
    })
    .execute()
  await db
    .insertInto('bot_apps')
    .values({ bot_id: bot, owner_id: ann, name: 'Hook', allowed_commands: '[]', token_hash: 'x', created_at: now, updated_at: now })
    .execute()
  const delivery = (chatKey: string, status: string, at: number) => ({
    bot_id: bot,
    chat_key: chatKey,
    kind: 'custom',
    update_id: null,
    payload: '{}',
    status,
    attempts: status === 'pending' ? 1 : 0,
    next_attempt_at: at,
    last_status_code: null,
    last_error: null,
    created_at: now - 500,
    delivered_at: null,
  })
  const rows = await db
    .insertInto('bot_webhook_deliveries')
    .values([
      delivery('chat:1', 'delivered', now),
      delivery('chat:1', 'pending', now + 700),
      delivery('chat:1', 'pending', now),
      delivery('chat:2', 'failed', now),
    ])
    .returning('id')
    .execute()
  await db
    .insertInto('broadcasts')
    .values([
      { admin_id: ann, content: 'done', status: 'done', total: 1, last_user_id: ben, created_at: now },
      { admin_id: ann, content: 'half way', status: 'running', total: 2, last_user_id: ben, created_at: now },
    ])
    .execute()

  assert.equal((await migrator.migrateToLatest()).error, undefined)
  const items = await db.selectFrom('work_queue').selectAll().orderBy('kind').orderBy('item_key').execute()
  const pick = (row: any) => ({
    kind: row.kind,
    key: row.item_key,
    due: Number(row.due_at),
    ref: row.ref === null ? null : Number(row.ref),
    count: row.count,
    attempts: row.attempts,
    data: row.data,
  })
  const byKind = new Map(items.map((row: any) => [row.kind, pick(row)]))
  assert.deepEqual(
    items.map((row: any) => row.kind),
    ['broadcasts', 'push', 'scheduled', 'webhook'],
    'one item each: no lane for chat:2 (nothing pending)',
  )
  assert.deepEqual(byKind.get('scheduled'), {
    kind: 'scheduled',
    key: String(pending.id),
    due: now + 60_000,
    ref: Number(pending.id),
    count: 1,
    attempts: 0,
    data: null,
  })
  assert.deepEqual(byKind.get('push'), {
    kind: 'push',
    key: `${ben}:${chat.id}`,
    due: now + 5000,
    ref: 42,
    count: 3,
    attempts: 2,
    data: 'mention',
  })
  // the lane's head is its oldest pending delivery, at its retry time
  assert.deepEqual(byKind.get('webhook'), {
    kind: 'webhook',
    key: `${bot}:chat:1`,
    due: now + 700,
    ref: Number(rows[1].id),
    count: 1,
    attempts: 1,
    data: null,
  })
  assert.equal(byKind.get('broadcasts')!.key, 'all')
  await assert.rejects(sql`select count(*) from push_queue`.execute(db), 'push_queue is gone')

  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined)
  assert.deepEqual(await db.selectFrom('push_queue').selectAll().execute(), [], 'down: push_queue is back, empty')
})
