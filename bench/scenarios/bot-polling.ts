/**
 * bot-polling: a bot on long polling while users send it 500 messages/s. The figure is
 * the time from a user's send (POST V2/messages/send starting) to the bot's getUpdates answer
 * carrying that message: the send, the update written after the commit, the waiting poll woken,
 * and its answer. The bot acknowledges each batch with the next offset, as grammY does; the
 * senders are paced (a message every 2 ms, round robin over USERS users, each in its personal chat
 * with the bot), over keep-alive connections from this process.
 */
import http from 'node:http'
import { call, registerMany, V2 } from '../lib/api.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, type Scenario } from '../lib/scenario.js'
import { startServer } from '../lib/server.js'
import { percentile } from '../lib/stats.js'

const RATE = 500
const USERS = 20

/** POST JSON over a kept-alive connection of `agent`; answers the status and the parsed body. */
function post(agent: http.Agent, url: string, body: unknown, token?: string): Promise<{ status: number; body: any }> {
  const payload = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) })
          } catch (error) {
            reject(error)
          }
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}

export const botPolling: Scenario = {
  name: 'bot-polling',
  summary: `bot on long polling: user message → getUpdates answer, p50/p99 at ${fmt(RATE)} messages/s`,
  async run(ctx) {
    const dataDir = makeDataDir('bot-polling')
    const server = await startServer(ctx.machine, 'tern', dataDir, { startTimeoutMs: 60_000 })
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
    try {
      const users = await registerMany(server.url, 'poller', USERS + 1)
      const owner = users[USERS]
      const { data: bot } = await call<{ data: { bot_id: number; token: string } }>(`${server.url}/api/bots/register`, {
        token: owner.token,
        body: { name: 'Bench poller', username: 'bench_poll_bot' },
      })
      const chats: number[] = []
      for (const user of users.slice(0, USERS)) {
        const { data } = await call<{ data: { chat_id: number } }>(`${server.url}${V2}/messages/send`, {
          token: user.token,
          body: { receiver_id: bot.bot_id, content: 'hello' },
        })
        chats.push(data.chat_id)
      }

      const sentAt = new Map<string, number>()
      const latencies: number[] = []
      let polling = true
      let offset = 0
      let errors = 0
      /** The bot: long polls, acknowledging each answer with the next offset. */
      const poller = (async () => {
        while (polling) {
          const res = await post(agent, `${server.url}/bot${bot.token}/getUpdates`, { offset, timeout: 1 })
          const answer = res.body as { ok: boolean; result: { update_id: number; message?: { text?: string } }[] }
          const now = performance.now()
          if (!answer.ok) throw new Error(`getUpdates: ${JSON.stringify(answer).slice(0, 200)}`)
          for (const update of answer.result) {
            offset = update.update_id + 1
            const started = update.message?.text ? sentAt.get(update.message.text) : undefined
            if (started !== undefined) {
              latencies.push(now - started)
              sentAt.delete(update.message!.text!)
            }
          }
        }
      })()

      const p50: number[] = []
      const p99: number[] = []
      let serial = 0
      const window = async (ms: number, measure: boolean) => {
        const start = performance.now()
        const sends: Promise<void>[] = []
        latencies.length = 0
        const sendTimes: number[] = []
        for (let i = 0; ; i++) {
          const due = start + (i * 1000) / RATE
          if (due - start >= ms) break
          const wait = due - performance.now()
          if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait))
          const k = serial++ % USERS
          const text = `m${serial}`
          const began = performance.now()
          sentAt.set(text, began)
          sends.push(
            post(agent, `${server.url}${V2}/messages/send`, { chat_id: chats[k], content: text }, users[k].token).then(
              (res) => {
                sendTimes.push(performance.now() - began)
                if (res.status !== 200) errors++
              },
              () => {
                errors++
              },
            ),
          )
        }
        await Promise.all(sends)
        // the last updates arrive a few ms after their sends are answered
        const deadline = performance.now() + 5000
        while (sentAt.size > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
        if (!measure) return
        if (errors) throw new Error(`${errors} sends failed`)
        if (sentAt.size > 0) throw new Error(`${sentAt.size} messages never reached getUpdates`)
        const sent = Math.round((ms * RATE) / 1000)
        const a = percentile(latencies, 50)
        const b = percentile(latencies, 99)
        p50.push(a)
        p99.push(b)
        ctx.log(
          `  ${fmt(sent)} messages, p50 ${fmt(a, 2)} ms, p99 ${fmt(b, 2)} ms, max ${fmt(Math.max(...latencies), 1)} ms (the sends alone: p50 ${fmt(percentile(sendTimes, 50), 2)} ms, p99 ${fmt(percentile(sendTimes, 99), 2)} ms)`,
        )
      }
      await window(ctx.warmupMs, false)
      for (let run = 1; run <= ctx.runs; run++) await window(ctx.durationMs, true)
      polling = false
      await poller
      const scenario = this.name
      return [
        { scenario, figure: `user message → getUpdates answer p50 at ${fmt(RATE)} msg/s`, unit: 'ms', samples: p50 },
        { scenario, figure: `user message → getUpdates answer p99 at ${fmt(RATE)} msg/s`, unit: 'ms', samples: p99, target: { max: 20 } },
      ] satisfies Row[]
    } finally {
      agent.destroy()
      await server.stop()
      removeDataDir(dataDir)
    }
  },
}
