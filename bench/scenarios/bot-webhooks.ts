/**
 * bot-webhooks: bot webhook deliveries sustained per second to a local receiver.
 *
 * The bot's webhook is paused while DELIVERIES webhook/send calls queue (spread over CHATS chats,
 * so up to CHATS go out side by side, each chat's in order); the figure is the time from resuming
 * it until the receiver has answered 200 to every one: the webhook-delivery job's rate (take the
 * row from the table, sign it, POST it over a kept-alive connection, mark it delivered). A second
 * figure sends them all in one chat, one after another. The receiver (in this process) checks each
 * chat's order and that nothing came twice.
 */
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { call, registerMany } from '../lib/api.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, type Scenario } from '../lib/scenario.js'
import { startServer } from '../lib/server.js'

const DELIVERIES = 3000
const CHATS = 32
/** webhook/send calls in flight while queueing */
const QUEUEING = 16

interface Receiver {
  url: string
  /** resolves when `count` deliveries have arrived; rejects on a repeat or a chat out of order */
  expect(count: number): Promise<void>
  close(): Promise<void>
}

async function startReceiver(): Promise<Receiver> {
  let seen = new Set<string>()
  let lastOfChat = new Map<number, number>()
  let waiting: { count: number; resolve(): void; reject(error: Error): void } | null = null
  const fail = (why: string) => waiting?.reject(new Error(why))
  const listener = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      response.writeHead(200, { 'content-length': '0' }).end()
      const id = String(request.headers['webhook-id'])
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { chat_id: number } }
      if (seen.has(id)) return fail(`delivery ${id} arrived twice`)
      seen.add(id)
      // a chat's deliveries go in the order they were queued: their ids (msg_<id>) grow
      const n = Number(id.slice(4))
      const previous = lastOfChat.get(body.data.chat_id) ?? -1
      if (n <= previous) return fail(`chat ${body.data.chat_id}: delivery ${n} after ${previous}`)
      lastOfChat.set(body.data.chat_id, n)
      if (waiting && seen.size >= waiting.count) waiting.resolve()
    })
  })
  listener.keepAliveTimeout = 30_000
  listener.listen(0, '127.0.0.1')
  await once(listener, 'listening')
  return {
    url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/hook`,
    expect(count) {
      seen = new Set()
      lastOfChat = new Map()
      return new Promise<void>((resolve, reject) => {
        waiting = { count, resolve, reject }
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        listener.closeAllConnections()
        listener.close(() => resolve())
      }),
  }
}

export const botWebhooks: Scenario = {
  name: 'bot-webhooks',
  summary: `bot webhook deliveries per second to a local receiver (${fmt(DELIVERIES)} queued, over ${CHATS} chats and in one chat)`,
  async run(ctx) {
    const dataDir = makeDataDir('bot-webhooks')
    const receiver = await startReceiver()
    const server = await startServer(ctx.machine, 'tern', dataDir, { env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, startTimeoutMs: 60_000 })
    try {
      const [owner] = await registerMany(server.url, 'hooker', 1)
      const { data: bot } = await call<{ data: { bot_id: number } }>(`${server.url}/api/bots/register`, {
        token: owner.token,
        body: { name: 'Bench hook', username: 'bench_hook_bot' },
      })
      const setHook = (isActive: boolean) =>
        call(`${server.url}/api/bots/${bot.bot_id}/webhook`, { token: owner.token, body: { url: receiver.url, is_active: isActive } })

      /** Queues the deliveries with the webhook paused, resumes it, and answers deliveries per second. */
      const measure = async (chats: number, label: string) => {
        await setHook(false)
        let next = 0
        await Promise.all(
          Array.from({ length: QUEUEING }, async () => {
            for (let i = next++; i < DELIVERIES; i = next++) {
              await call(`${server.url}/api/bots/${bot.bot_id}/webhook/send`, {
                token: owner.token,
                body: { data: { chat_id: i % chats, n: i } },
              })
            }
          }),
        )
        const arrived = receiver.expect(DELIVERIES)
        const started = performance.now()
        await setHook(true)
        await arrived
        const perSecond = DELIVERIES / ((performance.now() - started) / 1000)
        ctx.log(`  ${label}: ${fmt(perSecond)} deliveries/s`)
        return perSecond
      }

      const spread: number[] = []
      const single: number[] = []
      for (let run = 1; run <= ctx.runs; run++) {
        ctx.log(`  run ${run}`)
        spread.push(await measure(CHATS, `${CHATS} chats`))
        single.push(await measure(1, 'one chat'))
      }
      const scenario = this.name
      return [
        { scenario, figure: `webhook deliveries sustained, ${CHATS} chats side by side`, unit: 'msg/s', samples: spread },
        { scenario, figure: 'webhook deliveries sustained, one chat (in order, one at a time)', unit: 'msg/s', samples: single },
      ] satisfies Row[]
    } finally {
      await server.stop()
      await receiver.close()
      removeDataDir(dataDir)
    }
  },
}
