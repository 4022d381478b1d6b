/**
 * message-search: GET V2/search/messages for a user whose 20 chats hold 1,000,000 messages of
 * ordinary text (words drawn from a vocabulary of 5,000 with Zipf frequencies, 5 to 12 a message),
 * one request at a time: the commonest word (in over half the messages), a rare one (a few hundred),
 * two words together, a 3-letter prefix, and the commonest word in one chat. Also how long the
 * indexing job takes to index the 1,000,000 seeded messages at start (SQLite indexes in batches,
 * off the send path).
 */
import SQLite from 'better-sqlite3'
import path from 'node:path'
import { openChat, registerMany, sendMessage, V2, type BenchUser } from '../lib/api.js'
import { createPgDatabase, insertRows } from '../lib/pg.js'
import { makeDataDir, removeDataDir } from '../lib/processes.js'
import type { Row } from '../lib/report.js'
import { fmt, serviceTime, type BenchContext, type Scenario } from '../lib/scenario.js'
import { fillHistory, insertPersonalChats, openTernDb } from '../lib/seed.js'
import { startServer, type Server } from '../lib/server.js'

const MESSAGES = 1_000_000
const CHATS = 20
const VOCABULARY = 5000

/** A deterministic generator (mulberry32), so every run searches the same text. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The vocabulary, and sentences of 5 to 12 of its words drawn with Zipf frequencies (the same every run). */
function text() {
  const words = vocabulary()
  // Zipf: word k is drawn with probability proportional to 1/(k+1)
  const weights = words.map((_, k) => 1 / (k + 1))
  const total = weights.reduce((a, b) => a + b, 0)
  const cumulative: number[] = []
  weights.reduce((sum, w, k) => (cumulative[k] = sum + w / total), 0)
  const next = random(42)
  const draw = () => {
    const x = next()
    let lo = 0
    let hi = words.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cumulative[mid] < x) lo = mid + 1
      else hi = mid
    }
    return words[lo]
  }
  const sentence = () => Array.from({ length: 5 + Math.floor(next() * 8) }, draw).join(' ')
  return { words, sentence }
}

/** Pronounceable distinct words: syllables chosen by the word's number. */
function vocabulary(): string[] {
  const onsets = ['b', 'd', 'f', 'g', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'br', 'st', 'tr', 'pl']
  const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou']
  const syllable = (n: number) => onsets[n % onsets.length] + vowels[Math.floor(n / onsets.length) % vowels.length]
  const perSyllable = onsets.length * vowels.length
  return Array.from({ length: VOCABULARY }, (_, i) => syllable(i) + syllable(Math.floor(i / perSyllable) + 7) + syllable(i * 7 + 3))
}

export const messageSearch: Scenario = {
  name: 'message-search',
  summary: `search/messages over ${fmt(MESSAGES)} messages in the user's ${CHATS} chats: common, rare, two words, a prefix, one chat (p50 target 50 ms)`,
  async run(ctx) {
    const dataDir = makeDataDir('message-search')
    let server = await startServer(ctx.machine, 'tern', dataDir)
    try {
      const [me, ...peers] = await registerMany(server.url, 'reader', CHATS + 1)
      await server.stop()
      const { words, sentence } = text()
      const seeding = Date.now()
      const db = openTernDb(dataDir)
      insertPersonalChats(
        db,
        me.id,
        peers.map((p) => p.id),
      )
      const chatIds = (
        db
          .prepare(
            'select chat_id from chat_members where user_id = ? and chat_id in (select id from chats where chat_type = ?) order by chat_id',
          )
          .pluck()
          .all(me.id, 'personal') as number[]
      ).filter((id) => (db.prepare('select peer1_id <> peer2_id from chats where id = ?').pluck().get(id) as number) === 1)
      for (const chatId of chatIds) fillHistory(db, chatId, MESSAGES / CHATS, [], sentence)
      db.close()
      ctx.log(`  seeded ${fmt(MESSAGES)} messages in ${CHATS} chats in ${fmt((Date.now() - seeding) / 1000, 1)} s`)

      const started = Date.now()
      server = await startServer(ctx.machine, 'tern', dataDir)
      // the indexing job runs at start; wait until it has indexed every message
      const reader = new SQLite(path.join(dataDir, 'tern.db'), { readonly: true })
      const top = reader.prepare('select max(id) from messages').pluck().get() as number
      reader.close()
      // the index is a file of its own, which the server creates at start
      const index = new SQLite(path.join(dataDir, 'tern.search.db'), { readonly: true })
      const mark = index.prepare('select indexed_up_to from search_state').pluck()
      while ((mark.get() as number) < top) await new Promise((resolve) => setTimeout(resolve, 200))
      index.close()
      const indexMs = Date.now() - started
      ctx.log(
        `  indexed ${fmt(MESSAGES)} messages in ${fmt(indexMs / 1000, 1)} s after start (${fmt(MESSAGES / (indexMs / 1000))} messages/s)`,
      )

      const rows = await measure(ctx, this.name, server, me, words, chatIds[7])
      return [
        ...rows,
        {
          scenario: this.name,
          figure: `indexing ${fmt(MESSAGES)} seeded messages from start (the job, in batches)`,
          unit: 'ms',
          samples: [indexMs],
        },
      ]
    } finally {
      await server.stop()
      removeDataDir(dataDir)
    }
  },
}

export const messageSearchPg: Scenario = {
  name: 'message-search-pg',
  summary: `search/messages over ${fmt(MESSAGES)} messages on PostgreSQL (BENCH_PG_URL): the same queries (GIN tsvector index)`,
  async run(ctx) {
    const dataDir = makeDataDir('message-search-pg')
    const database = await createPgDatabase('message_search')
    let server: Server | null = null
    try {
      const env = { DATABASE_URL: database.url }
      server = await startServer(ctx.machine, 'tern', dataDir, { env })
      const [me, ...peers] = await registerMany(server.url, 'reader', CHATS + 1)
      const chatIds: number[] = []
      for (const peer of peers) {
        const chatId = await openChat(server.url, me, peer)
        await sendMessage(server.url, peer, chatId, 'hello')
        chatIds.push(chatId)
      }
      await server.stop()
      const { sentence } = text()
      const seeding = Date.now()
      const perChat = MESSAGES / CHATS
      const now = Date.now()
      for (const [i, chatId] of chatIds.entries()) {
        const peer = peers[i]
        const rows = function* () {
          for (let seq = 2; seq <= perChat + 1; seq++) {
            const [sender, receiver] = seq % 2 ? [me.id, peer.id] : [peer.id, me.id]
            yield [chatId, seq, sender, receiver, sentence(), now - (perChat + 1 - seq) * 1000]
          }
        }
        await insertRows(database.client, 'messages', ['chat_id', 'seq', 'sender_id', 'receiver_id', 'content', 'created_at'], rows())
        await database.client.query(
          'update chats set message_seq = $1, last_message_id = (select max(id) from messages where chat_id = $2), last_message_at = $3 where id = $2',
          [perChat + 1, chatId, now],
        )
      }
      await database.client.query('vacuum analyze')
      ctx.log(`  seeded ${fmt(MESSAGES)} messages on PostgreSQL (the GIN index kept up) in ${fmt((Date.now() - seeding) / 1000, 1)} s`)
      server = await startServer(ctx.machine, 'tern', dataDir, { env })
      return await measure(ctx, this.name, server, me, text().words, chatIds[7])
    } finally {
      await server?.stop()
      await database.drop()
      removeDataDir(dataDir)
    }
  },
}

async function measure(
  ctx: BenchContext,
  scenario: string,
  server: Server,
  me: BenchUser,
  words: string[],
  oneChat: number,
): Promise<Row[]> {
  const queries = {
    common: words[0],
    rare: words[4000],
    two: `${words[1]} ${words[60]}`,
    prefix: words[300].slice(0, 3),
    chat: `${words[0]}&chat_id=${oneChat}`,
  }
  const p50 = Object.fromEntries(Object.keys(queries).map((key) => [key, [] as number[]])) as Record<keyof typeof queries, number[]>
  for (let run = 1; run <= ctx.runs; run++) {
    for (const [key, q] of Object.entries(queries) as [keyof typeof queries, string][]) {
      const [words, rest] = q.split('&')
      const query = `q=${encodeURIComponent(words)}&limit=20${rest ? `&${rest}` : ''}`
      const request = { method: 'GET' as const, path: `${V2}/search/messages?${query}`, headers: { authorization: `Bearer ${me.token}` } }
      p50[key].push((await serviceTime(ctx, server.port, `message search ${key}`, [request])).latency.p50)
    }
    ctx.log(
      `  run ${run}: ${Object.entries(p50)
        .map(([key, values]) => `${key} ${fmt(values.at(-1)!, 2)} ms`)
        .join(', ')}`,
    )
  }
  const target = { max: 50 }
  return [
    { scenario, figure: `commonest word among ${fmt(MESSAGES)} messages (in over half), p50`, unit: 'ms', samples: p50.common, target },
    { scenario, figure: 'a rare word (a few hundred messages), p50', unit: 'ms', samples: p50.rare, target },
    { scenario, figure: 'two words together, p50', unit: 'ms', samples: p50.two, target },
    { scenario, figure: 'a 3-letter prefix, p50', unit: 'ms', samples: p50.prefix, target },
    { scenario, figure: `commonest word in one chat of ${fmt(MESSAGES / CHATS)}, p50`, unit: 'ms', samples: p50.chat, target },
  ]
}
