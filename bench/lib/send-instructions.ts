/**
 * The driver of bench/instructions.ts, run under callgrind: Tern's send in process, as
 * bench/servers/send-alone.ts calls it (the messages service, 4 sends in flight per chat, 100
 * personal chats), for a fixed number of messages, from one build's `dist/`.
 *
 * Environment: TERN_ROOT (the checkout whose dist/ to load), DATA_DIR (made afresh), WARM (sends
 * before the counted ones), MEASURE (the counted sends; 0 for the run that counts only the rest).
 */
import fs from 'node:fs'
import path from 'node:path'
import type SQLite from 'better-sqlite3'

const root = process.env.TERN_ROOT!
const dataDir = process.env.DATA_DIR!
const warm = Number(process.env.WARM)
const measure = Number(process.env.MEASURE)
const PAIRS = 100
const WINDOW = 4

const load = (file: string) => import(path.join(root, 'dist/src', file))
const { loadConfig } = await load('config.js')
const { createContext } = await load('context.js')
const { migrateToLatest } = await load('db/migrate.js')
const { send } = await load('modules/messages/service.js')

fs.rmSync(dataDir, { recursive: true, force: true })
const ctx = createContext(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' }))
await migrateToLatest(ctx.db)
const sqlite = ctx.sqlite as SQLite.Database
const now = Date.now()
// the users and personal chats the socket-sends load opens (every member has read everything)
sqlite.transaction(() => {
  const user = sqlite.prepare('insert into users (username, display_name, created_at) values (?, ?, ?)')
  const chat = sqlite.prepare("insert into chats (chat_type, peer1_id, peer2_id, created_at) values ('personal', ?, ?, ?)")
  const member = sqlite.prepare('insert into chat_members (chat_id, user_id, joined_at) values (?, ?, ?)')
  for (let i = 1; i <= 2 * PAIRS; i++) user.run(`user${i}`, `User ${i}`, now)
  for (let i = 1; i < 2 * PAIRS; i += 2) {
    const chatId = Number(chat.run(i, i + 1, now).lastInsertRowid)
    member.run(chatId, i, now)
    member.run(chatId, i + 1, now)
  }
})()
const senders = sqlite
  .prepare('select m.chat_id as chatId, u.* from chat_members m join users u on u.id = m.user_id where u.id % 2 = 1 order by m.chat_id')
  .all() as { chatId: number; id: number }[]

let n = 0
/** `total` sends, WINDOW in flight per chat, each sender's next once its last is answered */
async function sends(total: number) {
  let started = 0
  const sender = async (me: (typeof senders)[number]) => {
    while (started < total) {
      started++
      await send(ctx, me, { chat_id: me.chatId, content: `a message of the send-alone bench #${n++}` })
    }
  }
  const loops: Promise<void>[] = []
  for (let w = 0; w < WINDOW; w++) for (const me of senders) loops.push(sender(me))
  await Promise.all(loops)
}

await sends(warm)
await sends(measure)
const stored = (sqlite.prepare('select count(*) as n from messages').get() as { n: number }).n
await ctx.close()
if (stored !== warm + measure) throw new Error(`stored ${stored} messages of ${warm + measure}`)
