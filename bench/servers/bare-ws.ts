/**
 * Baseline for idle-ws: a bare `ws` server that accepts every connection and sends one small
 * frame, so Tern's per-connection memory can be read against the library's own.
 */
import http from 'node:http'
import { WebSocketServer } from 'ws'

const server = http.createServer((request, response) => {
  response.writeHead(request.url === '/health' ? 200 : 404, { 'content-type': 'application/json' })
  response.end('{"status":"ok"}')
})
const wss = new WebSocketServer({ server })
wss.on('connection', (socket) => socket.send('{"type":"ready","data":{}}'))

server.listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => {
  for (const socket of wss.clients) socket.terminate()
  server.close(() => process.exit(0))
})
