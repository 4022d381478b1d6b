/**
 * The send scenarios' floor (socket-sends, send-throughput): Tern's send without the network. Run
 * on the server's core, on the data directory of a Tern server that has stopped (its users and
 * personal chats), it calls the messages service's `send` in process, closed loop, WINDOW sends in
 * flight per chat as the scenario's load kept them, so the sends share commits as they did there.
 * What it measures is what any transport pays per message before a byte goes out: the checks, the
 * transaction with its group commit (and the checkpointer's copy of it), and the message's JSON.
 * No HTTP, no WebSocket, no event listeners (nothing is delivered). If this alone costs more CPU
 * per message than a relay spends on its whole message, no transport can make Tern as fast as
 * that relay.
 *
 * Environment: DATA_DIR (the stopped server's), WINDOW, WARMUP_MS, DURATION_MS. Prints one JSON
 * line: { messages, seconds, rate, cpuUsPerMessage, cpuShare }; the window runs from the first
 * answer after the warm-up to the first answer DURATION_MS later.
 */
import { loadConfig } from '../../src/config.js'
import { createContext } from '../../src/context.js'
import type { UserRow } from '../../src/db/tables.js'
import { send } from '../../src/modules/messages/service.js'

const window = Number(process.env.WINDOW)
const warmupMs = Number(process.env.WARMUP_MS)
const durationMs = Number(process.env.DURATION_MS)
if (!(window >= 1 && warmupMs >= 0 && durationMs > 0)) throw new Error('send-alone needs WINDOW, WARMUP_MS and DURATION_MS')

const ctx = createContext(loadConfig({ ...process.env, LOG_LEVEL: 'warn' }))
const sqlite = ctx.sqlite
if (!sqlite) throw new Error('send-alone measures the SQLite send (DATABASE_URL must be SQLite)')

// each personal chat's member who has read everything in it (the load's sender: its sends stay
// on the common path, which a member with unread messages leaves to send a read receipt first)
const pairs = sqlite
  .prepare(
    `select m.chat_id as chatId, u.* from chats c
     join chat_members m on m.chat_id = c.id and m.read_seq = c.message_seq
     join users u on u.id = m.user_id
     where c.chat_type = 'personal' and c.peer1_id <> c.peer2_id
     group by c.id order by c.id`,
  )
  .all() as (UserRow & { chatId: number })[]
if (pairs.length === 0) throw new Error(`send-alone: no personal chat in ${process.env.DATA_DIR}`)

const start = performance.now()
const measureFrom = start + warmupMs
const end = measureFrom + durationMs
// the window opens at the first answer after the warm-up and closes at the first after its end
let opened: { at: number; cpu: NodeJS.CpuUsage } | null = null
let closed: { at: number; cpuUs: number } | null = null
let done = 0
let n = 0

// one sender's loop: its next send once the last is answered, until the window closes
async function sender(pair: UserRow & { chatId: number }) {
  while (!closed) {
    await send(ctx, pair, { chat_id: pair.chatId, content: `a message of the send-alone bench #${n++}` })
    const at = performance.now()
    if (closed) break
    if (!opened) {
      if (at >= measureFrom) opened = { at, cpu: process.cpuUsage() }
    } else if (at < end) {
      done++
    } else {
      const used = process.cpuUsage(opened.cpu)
      closed = { at, cpuUs: used.user + used.system }
    }
  }
}

const loops: Promise<void>[] = []
for (let w = 0; w < window; w++) for (const pair of pairs) loops.push(sender(pair))
await Promise.all(loops)
await ctx.close()
const { at, cpuUs } = closed!
const seconds = (at - opened!.at) / 1000
process.stdout.write(
  `${JSON.stringify({ messages: done, seconds, rate: done / seconds, cpuUsPerMessage: cpuUs / done, cpuShare: cpuUs / 1000 / (seconds * 1000) })}\n`,
)
