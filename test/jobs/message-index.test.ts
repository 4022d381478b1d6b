/**
 * SQLite's message search index on a real server: it lives in a file of its own (tern.search.db),
 * written by a worker thread; sends do not index their message; the `message-search-index` job
 * (and every search, first) has the worker index new messages in batches and apply the edits and
 * deletes the triggers record. A comparison with an index built afresh proves the index equals the
 * messages after a mixed workload on both sides of the mark. (On PostgreSQL a GIN index follows
 * every write; the black-box search tests cover both.)
 */
import assert from 'node:assert/strict'
import { getEventListeners } from 'node:events'
import fs from 'node:fs'
import { test } from 'node:test'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { sqlitePath } from '../../src/config.js'
import { INDEX_BATCH, MessageIndex, searchFileFor } from '../../src/modules/search/message-index.js'
import { registerUsers, send, V2 } from '../harness/messaging.js'
import { startTestServer, type TestServer } from '../harness/server.js'
import { waitFor } from '../harness/wait.js'

const server = await startTestServer()
const sqlite = server.ctx.config.dialect === 'sqlite'

const mark = async (s: TestServer) => s.ctx.messageIndex!.mark()
const catchUp = (s: TestServer) => s.ctx.messageIndex!.catchUp()
const recordedChanges = async () =>
  (await sql<{ id: number }>`select message_id as id from message_search_changes order by seq`.execute(server.ctx.db)).rows.map(
    (row) => row.id,
  )
const maxId = async (s: TestServer) =>
  Number(
    (
      await s.ctx.db
        .selectFrom('messages')
        .select((eb) => eb.fn.max('id').as('m'))
        .executeTakeFirstOrThrow()
    ).m,
  )
/**
 * The index holds exactly the words of the messages that should be in it (at or below the mark,
 * with text, not encrypted): every (word, message, position) of the index equals that of an index
 * built afresh from those messages with the same tokenizer. (FTS5's own integrity check sees
 * only the index's inner consistency; it runs too.)
 */
async function integrityCheck(s: TestServer) {
  const db = s.ctx.db
  await sql`insert into search.messages_search (messages_search, rank) values ('integrity-check', 0)`.execute(db)
  await sql`create virtual table temp.expected_search using fts5(content, chat, tokenize='unicode61 remove_diacritics 2')`.execute(db)
  try {
    await sql`insert into temp.expected_search (rowid, content, chat) select id, content, 'c' || chat_id from messages
      where id <= (select indexed_up_to from search.search_state) and content <> '' and is_encrypted = 0`.execute(db)
    await sql`create virtual table temp.expected_words using fts5vocab(temp, expected_search, instance)`.execute(db)
    await sql`create virtual table temp.indexed_words using fts5vocab(search, messages_search, instance)`.execute(db)
    const list = async (table: string) =>
      (
        await sql<{
          term: string
          doc: number
          col: string
          offset: number
        }>`select term, doc, col, "offset" from ${sql.table(table)} order by doc, col, "offset"`.execute(db)
      ).rows
    const [expected, indexed] = [await list('temp.expected_words'), await list('temp.indexed_words')]
    assert.ok(expected.length > 0, 'something is indexed')
    assert.deepEqual(indexed, expected, 'the index equals the messages it should hold')
  } finally {
    for (const table of ['indexed_words', 'expected_words', 'expected_search'])
      await sql`drop table if exists ${sql.table(`temp.${table}`)}`.execute(db)
  }
}

test('the index follows sends, edits and deletes on both sides of the mark, and stays exact', {
  skip: !sqlite && 'SQLite only',
}, async () => {
  const [alice, bob] = await users()
  const early = []
  for (let i = 0; i < 10; i++) early.push(await send(alice, bob, `early word${i} alpha`))
  await catchUp(server)
  assert.equal(await mark(server), await maxId(server), 'caught up')

  // after the mark: not indexed yet; edited and deleted before the indexer reaches them
  const late = []
  for (let i = 0; i < 10; i++) late.push(await send(alice, bob, `late word${i} beta`))
  const edit = (id: number, content: string) => alice.api.post(`${V2}/messages/${id}/edit`, { content })
  const deleteForAll = (id: number) => alice.api.delete(`${V2}/messages/${id}`, { query: { for_all: 'true' } })
  for (const [i, m] of [...early.slice(0, 3), ...late.slice(0, 3)].entries())
    assert.equal((await edit(m.message_id, `edited gamma ${i}`)).status, 200)
  for (const m of [early[5], late[5]]) assert.equal((await deleteForAll(m.message_id)).status, 200)
  // a row that goes altogether (as when an account is deleted): the trigger takes it out of the index
  await server.ctx.db.deleteFrom('messages').where('id', 'in', [early[6].message_id, late[6].message_id]).execute()
  // the triggers recorded each changed message for the worker (the index itself is another file)
  const changed = [...early.slice(0, 3), ...late.slice(0, 3), early[5], late[5], early[6], late[6]]
    .map((m) => m.message_id)
    .sort((a, b) => a - b)
  assert.deepEqual(
    [...new Set(await recordedChanges())].sort((a, b) => a - b),
    changed,
  )

  const found = async (q: string) => {
    const res = await bob.api.get(`${V2}/search/messages`, { query: { q, limit: 50 } })
    assert.equal(res.status, 200, res.text)
    return res.body.data.items.length
  }
  assert.equal(await found('gamma'), 6, 'edits on both sides of the mark')
  assert.equal(await found('alpha'), 10 - 3 - 2, 'early: less the edited, deleted for all and deleted')
  assert.equal(await found('beta'), 10 - 3 - 2, 'late: the same, indexed by the search itself')
  assert.equal(await mark(server), await maxId(server), 'the search caught up')
  assert.deepEqual(await recordedChanges(), [], 'the changes applied are dropped')
  await integrityCheck(server)

  // and after: changes of rows below the mark go through the triggers
  assert.equal((await edit(late[9].message_id, 'edited delta')).status, 200)
  await deleteForAll(late[8].message_id)
  assert.equal(await found('delta'), 1)
  assert.equal(await found('beta'), 10 - 3 - 2 - 2)
  await integrityCheck(server)
})

test('the job indexes new messages by itself, in batches', { skip: !sqlite && 'SQLite only' }, async () => {
  const [alice, bob] = await users()
  const chat = (await send(alice, bob, 'opening')).chat_id
  // many messages at once, written straight to the table as an import would
  const { seq } = await server.ctx.db.selectFrom('chats').select('message_seq as seq').where('id', '=', chat).executeTakeFirstOrThrow()
  const rows = Array.from({ length: INDEX_BATCH * 2 + 17 }, (_, i) => ({
    chat_id: chat,
    seq: seq + 1 + i,
    sender_id: alice.id,
    receiver_id: bob.id,
    content: `bulk ${i}`,
    created_at: Date.now(),
  }))
  // in one transaction with the check, so the job cannot index them in between (one writer)
  const top = await server.ctx.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += 500)
      await trx
        .insertInto('messages')
        .values(rows.slice(i, i + 500))
        .execute()
    await trx
      .updateTable('chats')
      .set({ message_seq: seq + rows.length })
      .where('id', '=', chat)
      .execute()
    const newest = Number(
      (
        await trx
          .selectFrom('messages')
          .select((eb) => eb.fn.max('id').as('m'))
          .executeTakeFirstOrThrow()
      ).m,
    )
    const { rows: marks } = await sql<{ m: number }>`select indexed_up_to as m from search.search_state`.execute(trx)
    assert.ok(marks[0].m < newest, 'not indexed on insert')
    return newest
  })
  // the job runs every 2 s; it reaches the newest message without any search
  await waitFor(async () => ((await mark(server)) === top ? true : undefined), {
    timeoutMs: 10_000,
    message: 'the job reaches the newest message',
  })
  await integrityCheck(server)
  const res = await bob.api.get(`${V2}/search/messages`, { query: { q: 'bulk', chat_id: chat, limit: 1 } })
  assert.equal(res.body.data.items[0].content, `bulk ${rows.length - 1}`)
})

test('the index is a file of its own, and one found ahead of the database is rebuilt', { skip: !sqlite && 'SQLite only' }, async () => {
  const [alice, bob] = await users()
  for (let i = 0; i < 5; i++) await send(alice, bob, `own file epsilon ${i}`)
  await catchUp(server)
  const mainFile = sqlitePath(server.ctx.config.databaseUrl)
  const searchFile = searchFileFor(mainFile)
  assert.ok(fs.existsSync(searchFile), searchFile)
  const tables = (await sql<{ name: string }>`select name from main.sqlite_master where type = 'table'`.execute(server.ctx.db)).rows.map(
    (row) => row.name,
  )
  assert.ok(tables.includes('messages') && !tables.some((name) => name.startsWith('messages_search')), 'the main database holds no index')

  // as after a restore of an older backup: the index says it holds messages the database lacks
  const other = new SQLite(mainFile)
  other.pragma('busy_timeout = 5000')
  const opened: MessageIndex[] = []
  const open = () => opened[opened.push(new MessageIndex(other, mainFile)) - 1]
  try {
    // a control first: an index in step is not rebuilt when a worker starts on it
    assert.equal((await open().catchUp()).rebuilt, false)
    other.prepare('update search.search_state set indexed_up_to = indexed_up_to + 1000000').run()
    const ahead = await open().catchUp()
    assert.equal(ahead.rebuilt, true)
    assert.ok(ahead.indexed >= 5, `every message indexed again (${ahead.indexed})`)
    assert.equal(opened[1].mark(), await maxId(server))
  } finally {
    for (const index of opened) await index.close()
    other.close()
  }
  await integrityCheck(server)
  const res = await bob.api.get(`${V2}/search/messages`, { query: { q: 'epsilon', limit: 50 } })
  assert.equal(res.body.data.items.length, 5)
})

test("catch-ups leave no listener on the job runner's signal, which outlives them", { skip: !sqlite && 'SQLite only' }, async () => {
  const runner = new AbortController()
  for (let i = 0; i < 20; i++) await server.ctx.messageIndex!.catchUp(runner.signal)
  assert.equal(getEventListeners(runner.signal, 'abort').length, 0)
  // a control: while one waits, its listener is there
  const waiting = server.ctx.messageIndex!.catchUp(runner.signal)
  assert.equal(getEventListeners(runner.signal, 'abort').length, 1)
  await waiting
  assert.equal(getEventListeners(runner.signal, 'abort').length, 0)
})

async function users() {
  return registerUsers(server, 2)
}
