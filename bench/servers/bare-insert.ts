/**
 * Baseline for send-throughput: a bare Fastify route doing one better-sqlite3 INSERT per request,
 * with the pragmas of src/db/database.ts. It listens on Tern's send path so that both servers get
 * byte-identical requests from the same load generator.
 */
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import Fastify from 'fastify'

const dataDir = process.env.DATA_DIR!
fs.mkdirSync(dataDir, { recursive: true })
const sqlite = new SQLite(path.join(dataDir, 'bare.db'))
sqlite.pragma('journal_mode = WAL')
sqlite.pragma('synchronous = NORMAL')
sqlite.pragma('foreign_keys = ON')
sqlite.pragma('busy_timeout = 5000')
sqlite.exec(`create table if not exists messages (
  id integer primary key autoincrement,
  chat_id integer not null,
  content text not null,
  created_at integer not null
)`)
const insert = sqlite.prepare('insert into messages (chat_id, content, created_at) values (?, ?, ?)')

const app = Fastify()
app.get('/health', async () => ({ status: 'ok' }))
app.post<{ Body: { chat_id: number; content: string } }>('/api.v2/api/messages/send', async (request) => {
  const now = Date.now()
  const { lastInsertRowid } = insert.run(request.body.chat_id, request.body.content, now)
  return {
    success: true,
    data: { message_id: Number(lastInsertRowid), chat_id: request.body.chat_id, content: request.body.content, created_at: now },
  }
})

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.on('SIGTERM', () => {
  void app.close().then(() => {
    sqlite.close()
    process.exit(0)
  })
})
