/**
 * Baselines for socket-sends: a bare `ws` server speaking just enough of Tern's socket protocol for
 * the pair load (bench/load/socket-sends.ts), with nothing of Tern's around it: no session, no
 * checks, no update log, no events.
 *
 *  - by default: the socket ceiling, the plain ceiling's twin (bench/servers/bare-insert.ts):
 *    each `send` frame is one INSERT of its message, group-committed (every frame that arrived in
 *    one event-loop turn in one transaction, with the pragmas of src/db/database.ts), and its ack
 *    and the receiver's `message.new` go out once that transaction committed.
 *  - `--no-store`: a relay that stores nothing, as ejabberd's bench instance does: the ack and the
 *    `message.new` go out at once.
 *
 * Frames to one socket in one turn leave in one write (the socket corked around them), as Tern's
 * do. A socket's role comes from its token: `s.<n>` sends into chat n, `r.<n>` receives chat n.
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { WebSocketServer, type WebSocket } from 'ws'

let insert: SQLite.Statement | null = null
let sqlite: SQLite.Database | null = null
if (!process.argv.includes('--no-store')) {
  const dataDir = process.env.DATA_DIR!
  fs.mkdirSync(dataDir, { recursive: true })
  sqlite = new SQLite(path.join(dataDir, 'relay.db'))
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('busy_timeout = 5000')
  sqlite.exec(`create table if not exists messages (
    id integer primary key autoincrement,
    chat_id integer not null,
    sender_id integer not null,
    content text not null,
    created_at integer not null
  )`)
  insert = sqlite.prepare('insert into messages (chat_id, sender_id, content, created_at) values (?, ?, ?, ?)')
}

/** each chat's receiving socket */
const receivers = new Map<number, WebSocket>()

/** frames held for one write per socket at the end of this turn */
const held = new Map<WebSocket, string[]>()
function hold(socket: WebSocket, text: string) {
  let frames = held.get(socket)
  if (!frames) {
    if (held.size === 0) process.nextTick(flush)
    held.set(socket, (frames = []))
  }
  frames.push(text)
}
function flush() {
  for (const [socket, frames] of held) {
    // the load closes its sockets when its window ends
    if (socket.readyState !== socket.OPEN) continue
    const tcp = (socket as unknown as { _socket: import('node:net').Socket })._socket
    tcp.cork()
    for (const text of frames) socket.send(text)
    tcp.uncork()
  }
  held.clear()
}

interface Pending {
  sender: WebSocket
  id: number
  chatId: number
  senderId: number
  content: string
  at: number
}
let queue: Pending[] = []

function deliver(p: Pending, messageId: number) {
  const message = `{"message_id":${messageId},"chat_id":${p.chatId},"sender_id":${p.senderId},"content":${JSON.stringify(p.content)},"created_at":${p.at}}`
  hold(p.sender, `{"type":"ack","id":${p.id},"data":${message}}`)
  const receiver = receivers.get(p.chatId)
  if (receiver) hold(receiver, `{"type":"message.new","data":{"message":${message}}}`)
}

/** One transaction for every send of the turn; the frames go after its commit. */
function commit() {
  const batch = queue
  queue = []
  const ids: number[] = []
  sqlite!.transaction(() => {
    for (const p of batch) ids.push(Number(insert!.run(p.chatId, p.senderId, p.content, p.at).lastInsertRowid))
  })()
  for (const [i, p] of batch.entries()) deliver(p, ids[i])
}

let nextId = 1
const server = http.createServer((request, response) => {
  response.writeHead(request.url === '/health' ? 200 : 404, { 'content-type': 'application/json' })
  response.end('{"status":"ok"}')
})
const wss = new WebSocketServer({ server, perMessageDeflate: false })
wss.on('connection', (socket, request) => {
  const token = new URL(request.url ?? '/', 'http://relay').searchParams.get('token') ?? ''
  const [role, n] = [token.slice(0, 2), Number(token.slice(2))]
  if (role === 'r.') receivers.set(n, socket)
  else if (role === 's.') {
    socket.on('message', (raw) => {
      const frame = JSON.parse(String(raw)) as { type: string; id: number; data: { chat_id: number; content: string } }
      if (frame.type !== 'send') return
      const p: Pending = {
        sender: socket,
        id: frame.id,
        chatId: frame.data.chat_id,
        senderId: n,
        content: frame.data.content,
        at: Date.now(),
      }
      if (!sqlite) return deliver(p, nextId++)
      queue.push(p)
      if (queue.length === 1) setImmediate(commit)
    })
  }
  socket.send('{"type":"ready","data":{}}')
})

server.listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => {
  for (const socket of wss.clients) socket.terminate()
  server.close(() => {
    sqlite?.close()
    process.exit(0)
  })
})
