/**
 * Crash durability: under a sending load (over HTTP, and over the socket) the
 * server is killed with SIGKILL, three times, and restarted on the same data. After each restart
 * every acknowledged send (a 2xx, or a socket ack) is stored
 * with its id, chat and content; nothing stored is half-written (each stored message is one that
 * was attempted, once, with its recipient's update-log entry); every user's update seq runs on
 * without a gap or a reuse; an acknowledged upload still has its bytes, an acknowledged
 * scheduled message is still pending or, once due, delivered. SQLite, and PostgreSQL with
 * TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { after, test } from 'node:test'
import WebSocket from 'ws'
import { createDatabase } from '../../src/db/database.js'
import { Client } from '../harness/client.js'
import { createTestDatabase, tempDir } from '../harness/database.js'
import { startTern, type TernProcess } from '../harness/process.js'
import { updateLog } from '../harness/update-log.js'

const V2 = '/api.v2/api'
/** kills per run: 3 in `npm test`, more on demand (CRASH_ROUNDS=20 node --import tsx --test test/process/crash-durability.test.ts) */
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 3)
const SENDERS = 12
const USERS = 8
/** a scheduled message due this soon falls due while the server is down or just after */
const SOON_MS = 1500

const dataDir = tempDir()
const database = await createTestDatabase(dataDir)
const env = {
  DATA_DIR: dataDir,
  DATABASE_URL: database.url,
  LOG_LEVEL: 'error',
  REGISTER_RATE_LIMIT: '1000/60',
  WRITE_RATE_LIMIT_USER: '1000000/60',
  WRITE_RATE_LIMIT_IP: '1000000/60',
}
let running: TernProcess | null = null
after(async () => {
  running?.child.kill('SIGKILL')
  await database.drop()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

interface Acked {
  id: number
  chatId: number
  content: string
  receiverId: number
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

test('acknowledged sends, uploads and scheduled messages survive kill -9, three times; seqs go on without gaps', {
  timeout: 600_000,
}, async () => {
  let tern = (running = await startTern(env))
  const anonymous = new Client(tern.url)
  const users: { id: number; token: string }[] = []
  for (let i = 0; i < USERS; i++) {
    const res = await anonymous.post(`${V2}/auth/register`, {
      username: `crash_${i}_${randomBytes(3).toString('hex')}`,
      password: 'crash test password',
    })
    assert.equal(res.status, 201, res.text)
    users.push({ id: res.body.data.user.user_id, token: res.body.data.session_token })
  }

  const attempted = new Set<string>()
  const acked: Acked[] = []
  const uploads: { id: number; token: string; sha: string }[] = []
  const scheduledFar: { scheduledId: number; chatId: number; token: string; content: string }[] = []
  const scheduledSoon: { chatId: number; token: string; content: string }[] = []
  let counter = 0
  /** sends acknowledged over the socket */
  let socketAcks = 0

  for (let round = 1; round <= ROUNDS; round++) {
    const url = tern.url
    // an acknowledged upload and two acknowledged scheduled messages in this round
    const bytes = randomBytes(20_000)
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(bytes)]), `round-${round}.bin`)
    const up = await fetch(`${url}/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${users[0].token}` } })
    assert.equal(up.status, 200)
    uploads.push({ id: ((await up.json()) as { data: { id: number } }).data.id, token: users[0].token, sha: sha256(bytes) })
    const api0 = new Client(url).as(users[0].token)
    const far = await api0.post(`${V2}/messages/send`, {
      receiver_id: users[1].id,
      content: `far ${round}`,
      scheduled_at: new Date(Date.now() + 3600_000).toISOString(),
    })
    assert.equal(far.status, 200, far.text)
    scheduledFar.push({
      scheduledId: far.body.data.scheduled_id,
      chatId: far.body.data.chat_id,
      token: users[1].token,
      content: `far ${round}`,
    })
    const soon = await api0.post(`${V2}/messages/send`, {
      receiver_id: users[1].id,
      content: `soon ${round}`,
      scheduled_at: new Date(Date.now() + SOON_MS).toISOString(),
    })
    assert.equal(soon.status, 200, soon.text)
    scheduledSoon.push({ chatId: soon.body.data.chat_id, token: users[1].token, content: `soon ${round}` })

    // the load: senders between random pairs until the process dies under them
    let dead = false
    const sender = async () => {
      while (!dead) {
        const from = users[Math.floor(Math.random() * USERS)]
        let to = users[Math.floor(Math.random() * USERS)]
        if (to === from) to = users[(users.indexOf(from) + 1) % USERS]
        const content = `crash-${round}-${++counter}`
        attempted.add(content)
        try {
          const res = await fetch(`${url}${V2}/messages/send`, {
            method: 'POST',
            headers: { authorization: `Bearer ${from.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ receiver_id: to.id, content }),
          })
          const body = (await res.json()) as { data: { message_id: number; chat_id: number } }
          if (res.status === 200) acked.push({ id: body.data.message_id, chatId: body.data.chat_id, content, receiverId: to.id })
        } catch {
          // the connection died with the process: this send is not acknowledged
        }
      }
    }
    // over the socket: one per user, each send's ack awaited before the next, until the socket dies
    const socketSender = async (from: (typeof users)[number]) => {
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}${V2}/ws`, { headers: { authorization: `Bearer ${from.token}` } })
      ws.on('error', () => {})
      type Answer = { type: string; data?: { message_id: number; chat_id: number } }
      const answers = new Map<number, (frame: Answer) => void>()
      ws.on('message', (raw) => {
        const frame = JSON.parse(String(raw))
        if (frame.type === 'ack' || frame.type === 'error') answers.get(frame.id)?.(frame)
      })
      const closed = new Promise<null>((resolve) => ws.once('close', () => resolve(null)))
      if (!(await Promise.race([new Promise<boolean>((resolve) => ws.once('open', () => resolve(true))), closed]))) return
      while (!dead) {
        let to = users[Math.floor(Math.random() * USERS)]
        if (to === from) to = users[(users.indexOf(from) + 1) % USERS]
        const id = ++counter
        const content = `crash-${round}-${id}`
        attempted.add(content)
        const answer = new Promise<Answer>((resolve) => answers.set(id, resolve))
        try {
          ws.send(JSON.stringify({ type: 'send', id, data: { receiver_id: to.id, content } }))
        } catch {
          break
        }
        const frame = await Promise.race([answer, closed])
        if (!frame) break
        if (frame.type !== 'ack') continue
        acked.push({ id: frame.data!.message_id, chatId: frame.data!.chat_id, content, receiverId: to.id })
        socketAcks++
      }
      ws.terminate()
    }
    const load = [...Array.from({ length: SENDERS }, sender), ...users.map(socketSender)]
    // killed mid-load: once this round has enough acknowledged sends (a loaded machine is slow), at a random moment
    const thisRound = () => acked.filter((message) => message.content.startsWith(`crash-${round}-`)).length
    const deadline = Date.now() + 30_000
    while (thisRound() < 100 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 200))
    tern.child.kill('SIGKILL')
    await tern.exited
    dead = true
    await Promise.all(load)
    assert.ok(thisRound() >= 100, `round ${round}: only ${thisRound()} sends were acknowledged in 30 s`)

    tern = running = await startTern(env)
    await verify(tern.url)
  }

  async function verify(url: string) {
    const handle = createDatabase(database.url)
    try {
      const rows = await handle.db.selectFrom('messages').select(['id', 'chat_id', 'content']).where('content', 'like', 'crash-%').execute()
      const byId = new Map(rows.map((row) => [row.id, row]))
      for (const message of acked) {
        const row = byId.get(message.id)
        assert.ok(row, `acknowledged message ${message.id} (${message.content}) is missing after the crash`)
        assert.equal(row.content, message.content)
        assert.equal(row.chat_id, message.chatId)
      }
      // nothing half-written, nothing twice
      const seen = new Set<string>()
      for (const row of rows) {
        assert.ok(attempted.has(row.content!), `stored message ${row.id} was never sent`)
        assert.ok(!seen.has(row.content!), `${row.content} is stored twice`)
        seen.add(row.content!)
      }
      // on SQLite the newest rows may still be in the recent log: the log is both tables
      const log = await updateLog(handle.db, handle.dialect)
      const logged = new Set(log.filter((row) => row.type === 'message.new').map((row) => row.message_id))
      for (const row of rows) assert.ok(logged.has(row.id), `message ${row.id} is stored without its message.new in the update log`)
      // every user's log: seqs 1..n, no gap, no reuse
      for (const user of users) {
        const seqs = log.filter((row) => row.user_id === user.id).map((row) => row.seq)
        for (const [i, seq] of seqs.entries()) assert.equal(seq, seqs[0] + i, `user ${user.id}: seq ${seqs[0] + i} is missing or reused`)
      }
    } finally {
      await handle.close()
    }
    for (const file of uploads) {
      const res = await fetch(`${url}/files/${file.id}`, { headers: { authorization: `Bearer ${file.token}` } })
      assert.equal(res.status, 200, `acknowledged upload ${file.id}`)
      assert.equal(sha256(Buffer.from(await res.arrayBuffer())), file.sha)
    }
    for (const far of scheduledFar) {
      const sender = users[0]
      const list = await new Client(url).as(sender.token).get(`${V2}/messages/scheduled`, { query: { chat_id: String(far.chatId) } })
      assert.equal(list.status, 200)
      assert.ok(
        list.body.items.some((item: { content: string }) => item.content === far.content),
        `scheduled "${far.content}" is still pending`,
      )
    }
    // those due meanwhile are delivered once the restarted server runs the job: at start, or once
    // the killed instance's lease on it has run out (15 s)
    for (const soon of scheduledSoon.slice(-1)) {
      let contents: string[] = []
      for (let i = 0; i < 300; i++) {
        const history = await new Client(url)
          .as(soon.token)
          .get(`${V2}/chat/history`, { query: { chat_id: String(soon.chatId), per_page: '100' } })
        contents = history.body.items.map((item: { content: string }) => item.content)
        if (contents.includes(soon.content)) break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.ok(contents.includes(soon.content), `scheduled "${soon.content}" was delivered after the restart`)
    }
  }

  // both ways of sending were acknowledged under the kills
  assert.ok(
    socketAcks > 0 && acked.length - socketAcks > 0,
    `acknowledged: ${acked.length - socketAcks} over HTTP, ${socketAcks} over the socket`,
  )

  // and the server goes on: a send after the last restart takes the next seq
  const after = await new Client(tern.url)
    .as(users[0].token)
    .post(`${V2}/messages/send`, { receiver_id: users[1].id, content: 'after the crashes' })
  assert.equal(after.status, 200)
  assert.ok(after.body.data.message_id > Math.max(...acked.map((message) => message.id)))
  tern.child.kill('SIGTERM')
  await tern.exited
  running = null
})
