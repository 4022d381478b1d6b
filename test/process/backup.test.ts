/**
 * `npm run cli -- backup <file>` while the server writes, and `restore <file>` with the server
 * stopped (docs/operations.md, backups). On PostgreSQL both refuse and point at pg_dump.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, test } from 'node:test'
import SQLite from 'better-sqlite3'
import { Client } from '../harness/client.js'
import { createTestDatabase, tempDir } from '../harness/database.js'
import { runNode, startTern, type TernProcess } from '../harness/process.js'

const dataDir = tempDir()
const database = await createTestDatabase(dataDir)
const env = {
  DATA_DIR: dataDir,
  DATABASE_URL: database.url,
  REGISTER_RATE_LIMIT: '1000/60',
  WRITE_RATE_LIMIT_USER: '1000000/60',
  WRITE_RATE_LIMIT_IP: '1000000/60',
}
const cli = (...args: string[]) => runNode('src/cli/main.ts', args, env)
const V2 = '/api.v2/api'
let running: TernProcess | null = null
after(async () => {
  running?.child.kill('SIGKILL')
  await database.drop()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

async function stop(tern: TernProcess) {
  tern.child.kill('SIGTERM')
  assert.equal(await tern.exited, 0)
  running = null
}

async function register(api: Client, username: string) {
  const res = await api.post(`${V2}/auth/register`, { username, password: 'backup test password' })
  assert.equal(res.status, 201, res.text)
  return { id: res.body.data.user.user_id as number, api: api.as(res.body.data.session_token as string) }
}

const isSqlite = database.url.startsWith('sqlite:')

test('on PostgreSQL, backup and restore refuse and name pg_dump', {
  skip: isSqlite && 'SQLite run: the PostgreSQL refusal runs with TEST_DATABASE_URL',
}, async () => {
  const out = path.join(dataDir, 'pg.backup')
  for (const args of [
    ['backup', out],
    ['restore', out],
  ]) {
    const run = await cli(...args)
    assert.notEqual(run.code, 0, `${args[0]} must fail on PostgreSQL`)
    assert.match(run.stderr, /pg_dump/)
    assert.ok(!/\n\s+at /.test(run.stderr), 'no stack trace')
  }
  assert.ok(!fs.existsSync(out))
})

test('a backup taken while messages are being sent holds every message acknowledged before it began, and restores', {
  skip: !isSqlite && 'PostgreSQL run: backups of PostgreSQL are pg_dump’s',
}, async () => {
  const tern = (running = await startTern(env))
  const api = new Client(tern.url)
  const ann = await register(api, 'backup_ann')
  const ben = await register(api, 'backup_ben')

  // writers keep sending during the backup
  const acknowledged: { id: number; content: string }[] = []
  let sending = true
  let chatId = 0
  const writer = (async () => {
    for (let i = 0; sending; i++) {
      const content = `message ${i}`
      const res = await ann.api.post(`${V2}/messages/send`, { receiver_id: ben.id, content })
      assert.equal(res.status, 200, res.text)
      acknowledged.push({ id: res.body.data.message_id, content })
      chatId = res.body.data.chat_id
    }
  })()
  while (acknowledged.length < 50) await new Promise((resolve) => setTimeout(resolve, 10))

  const file = path.join(dataDir, 'tern.backup')
  // every message acknowledged so far (a timestamp would miss one acknowledged in the same millisecond)
  const acknowledgedBefore = acknowledged.length
  const run = await cli('backup', file)
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stdout, /backed up \d+ pages/, `stdout: ${JSON.stringify(run.stdout)}, stderr: ${JSON.stringify(run.stderr)}`)
  const sentDuring = acknowledged.length
  while (acknowledged.length < sentDuring + 20) await new Promise((resolve) => setTimeout(resolve, 10))
  sending = false
  await writer
  assert.ok(!fs.existsSync(`${file}.partial`))

  // the copy is whole and holds every message acknowledged before the backup began
  const copy = new SQLite(file, { readonly: true })
  let lastInBackup = 0
  try {
    assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok')
    const stored = new Map(
      (copy.prepare('select id, content from messages').all() as { id: number; content: string }[]).map((row) => [row.id, row.content]),
    )
    const before = acknowledged.slice(0, acknowledgedBefore)
    assert.ok(before.length >= 50)
    for (const message of before)
      assert.equal(stored.get(message.id), message.content, `message ${message.id} acknowledged before the backup`)
    // and nothing half-written: every stored message of the chat is one that was acknowledged
    const known = new Map(acknowledged.map((message) => [message.id, message.content]))
    for (const [id, content] of stored) if (content.startsWith('message ')) assert.equal(known.get(id), content)
    lastInBackup = Math.max(...[...stored.keys()])
  } finally {
    copy.close()
  }

  // an existing file is not overwritten without --force (a control: with --force it is)
  const again = await cli('backup', file)
  assert.equal(again.code, 2)
  assert.match(again.stderr, /--force/)
  assert.equal((await cli('backup', file, '--force')).code, 0)
  // the second copy was taken after the writer stopped: it has everything
  const full = new SQLite(file, { readonly: true })
  const fullCount = (full.prepare("select count(*) as n from messages where content like 'message %'").get() as { n: number }).n
  full.close()
  assert.equal(fullCount, acknowledged.length)

  // a message after the backup, then restore the backup: the later message is gone, the rest is there
  const late = await ann.api.post(`${V2}/messages/send`, { receiver_id: ben.id, content: 'after the backup' })
  assert.equal(late.status, 200)
  await stop(tern)

  const notTern = path.join(dataDir, 'not-a-database')
  fs.writeFileSync(notTern, 'hello')
  const refused = await cli('restore', notTern)
  assert.equal(refused.code, 1)
  assert.match(refused.stderr, /cannot be restored/)

  const restored = await cli('restore', file)
  assert.equal(restored.code, 0, restored.stderr)
  const kept = /kept as (\S+)/.exec(restored.stdout)?.[1]
  assert.ok(kept && fs.existsSync(kept), 'the replaced database is kept')

  const back = (running = await startTern(env))
  const login = await new Client(back.url).post(`${V2}/auth/login`, { login: 'backup_ben', password: 'backup test password' })
  assert.equal(login.status, 200)
  const benApi = new Client(back.url).as(login.body.data.session_token)
  const history = await benApi.get(`${V2}/chat/history`, { query: { chat_id: String(chatId) } })
  assert.equal(history.status, 200, history.text)
  const contents = history.body.items.map((message: { content: string }) => message.content)
  assert.ok(!contents.includes('after the backup'), 'the message sent after the backup is not in the restored database')
  assert.ok(contents.includes(acknowledged.at(-1)!.content), 'the last acknowledged message before the backup is')
  assert.ok(lastInBackup > 0)
  // message search is indexed again from the restored messages (its old index file was removed)
  const search = async (q: string) => {
    const res = await benApi.get(`${V2}/search/messages`, { query: { q, limit: 50 } })
    assert.equal(res.status, 200, res.text)
    return res.body.data.items.map((message: { content: string }) => message.content) as string[]
  }
  assert.equal((await search('message')).length, 50, 'the restored messages are found')
  assert.deepEqual(await search('backup'), [], 'the message sent after the backup is not')
  await stop(back)
})
