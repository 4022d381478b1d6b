/**
 * A bound for send-pg, not a baseline: the same Fastify route as bare-pg-insert.ts, answering the
 * same shape without any database work. No server that stores a send over HTTP on this core can
 * answer faster than this one, so its rate over the one-insert ceiling's is the most any HTTP send
 * path could reach against it here. Node's default flags, like the ceiling.
 */
import Fastify from 'fastify'

let nextId = 1
const app = Fastify()
app.get('/health', async () => ({ status: 'ok' }))
app.post<{ Body: { chat_id: number; content: string } }>('/api.v2/api/messages/send', async (request) => {
  const now = Date.now()
  return { success: true, data: { message_id: nextId++, chat_id: request.body.chat_id, content: request.body.content, created_at: now } }
})

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0))
})
