/**
 * Bulk seeding straight into Tern's SQLite file, while the server is stopped: millions of rows
 * through the HTTP API would take hours. Every write keeps the invariants the server relies on:
 * per-chat seqs are contiguous from 1 and `chats.message_seq` is the highest, `last_message_id`
 * and `last_message_at` name the newest message, personal chats have peer1_id < peer2_id and a
 * chat_members row for each side (its last_activity_at the chat's last message time), ids grow with seq, and sessions store the token's SHA-256.
 * Seeded history predates the per-user update log (like an imported archive): nothing measured
 * here replays it.
 */
import { createHash, randomBytes } from 'node:crypto'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { MESSAGE_TEXT } from './api.js'

export type SeedDb = SQLite.Database

export function openTernDb(dataDir: string): SeedDb {
  const db = new SQLite(path.join(dataDir, 'tern.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  return db
}

/**
 * Fills a personal chat up to `total` messages, alternating between its two peers, one second
 * apart and ending now, each with the text `textOf(seq)`. Returns the id of each seq asked for in
 * `idsOfSeqs`.
 */
export function fillHistory(
  db: SeedDb,
  chatId: number,
  total: number,
  idsOfSeqs: number[],
  textOf: (seq: number) => string = (seq) => `${MESSAGE_TEXT} #${seq}`,
): Map<number, number> {
  const chat = db.prepare('select peer1_id, peer2_id, message_seq from chats where id = ?').get(chatId) as {
    peer1_id: number
    peer2_id: number
    message_seq: number
  }
  const insert = db.prepare('insert into messages (chat_id, seq, sender_id, receiver_id, content, created_at) values (?, ?, ?, ?, ?, ?)')
  const now = Date.now()
  db.transaction(() => {
    let last = 0
    for (let seq = chat.message_seq + 1; seq <= total; seq++) {
      const [sender, receiver] = seq % 2 ? [chat.peer1_id, chat.peer2_id] : [chat.peer2_id, chat.peer1_id]
      last = Number(insert.run(chatId, seq, sender, receiver, textOf(seq), now - (total - seq) * 1000).lastInsertRowid)
    }
    db.prepare('update chats set message_seq = ?, last_message_id = ?, last_message_at = ? where id = ?').run(total, last, now, chatId)
    db.prepare('update chat_members set last_activity_at = ? where chat_id = ?').run(now, chatId)
  })()
  const idOf = db.prepare('select id from messages where chat_id = ? and seq = ?').pluck()
  return new Map(idsOfSeqs.map((seq) => [seq, idOf.get(chatId, seq) as number]))
}

/** Adds `count` users `<prefix>_<i>` sharing `template`'s password hash (so each could log in). Returns their ids. */
export function insertUsers(db: SeedDb, prefix: string, count: number, templateUserId: number): number[] {
  const hash = db.prepare('select password_hash from users where id = ?').pluck().get(templateUserId)
  const insert = db.prepare('insert into users (username, display_name, password_hash, created_at) values (?, ?, ?, ?)')
  const now = Date.now()
  return db.transaction(() =>
    Array.from({ length: count }, (_, i) => Number(insert.run(`${prefix}_${i}`, `${prefix} ${i}`, hash, now).lastInsertRowid)),
  )()
}

/** One live session per user; returns the bearer tokens, in the order of `userIds`. */
export function insertSessions(db: SeedDb, userIds: number[]): string[] {
  const insert = db.prepare(
    'insert into user_sessions (user_id, token_hash, token_prefix, created_at, last_activity) values (?, ?, ?, ?, ?)',
  )
  const now = Date.now()
  return db.transaction(() =>
    userIds.map((userId) => {
      const token = randomBytes(32).toString('base64url')
      insert.run(userId, createHash('sha256').update(token).digest('hex'), token.slice(0, 6), now, now)
      return token
    }),
  )()
}

/**
 * A personal chat between `ownerId` and each of `peerIds`, each holding one message from the peer
 * (unread by the owner), the chats' last activity one minute apart.
 */
export function insertPersonalChats(db: SeedDb, ownerId: number, peerIds: number[]) {
  const chat = db.prepare(
    "insert into chats (chat_type, peer1_id, peer2_id, message_seq, member_count, join_seq, created_at) values ('personal', ?, ?, 1, 2, 2, ?)",
  )
  const member = db.prepare('insert into chat_members (chat_id, user_id, joined_at, last_activity_at, position) values (?, ?, ?, ?, ?)')
  const message = db.prepare('insert into messages (chat_id, seq, sender_id, receiver_id, content, created_at) values (?, 1, ?, ?, ?, ?)')
  const last = db.prepare('update chats set last_message_id = ?, last_message_at = ? where id = ?')
  const now = Date.now()
  db.transaction(() => {
    peerIds.forEach((peerId, i) => {
      const at = now - (peerIds.length - i) * 60_000
      const chatId = Number(chat.run(Math.min(ownerId, peerId), Math.max(ownerId, peerId), at).lastInsertRowid)
      member.run(chatId, ownerId, at, at, 1)
      member.run(chatId, peerId, at, at, 2)
      const messageId = message.run(chatId, peerId, ownerId, `${MESSAGE_TEXT} #${i}`, at).lastInsertRowid
      last.run(messageId, at, chatId)
    })
  })()
}

/** Members per bucket of positions, as chats/members.ts keeps them. */
const BUCKET = 1024

/**
 * A group or channel owned by `ownerId` with `memberIds` as members (subscribers), in that join
 * order: member rows with positions, the bucket counts, member_count and join_seq, a permanent
 * invite code. Returns the chat id.
 */
export function insertCommunity(db: SeedDb, type: 'group' | 'channel', title: string, ownerId: number, memberIds: number[]): number {
  const now = Date.now()
  const plain = type === 'channel' ? 'subscriber' : 'member'
  return db.transaction(() => {
    const count = memberIds.length + 1
    const chatId = Number(
      db
        .prepare(
          `insert into chats (chat_type, title, description, created_by, owner_id, is_public, member_count, join_seq, invite_code, last_message_at, created_at)
           values (?, ?, '', ?, ?, 1, ?, ?, ?, ?, ?)`,
        )
        .run(type, title, ownerId, ownerId, count, count, randomBytes(16).toString('base64url'), now, now).lastInsertRowid,
    )
    const member = db.prepare(
      'insert into chat_members (chat_id, user_id, role, joined_at, last_activity_at, position) values (?, ?, ?, ?, ?, ?)',
    )
    const buckets = new Map<number, number>()
    ;[ownerId, ...memberIds].forEach((userId, i) => {
      const position = i + 1
      member.run(chatId, userId, i === 0 ? 'owner' : plain, now, now, position)
      const bucket = Math.floor(position / BUCKET)
      buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1)
    })
    const bucket = db.prepare('insert into member_buckets (chat_id, bucket, members) values (?, ?, ?)')
    for (const [b, members] of buckets) bucket.run(chatId, b, members)
    return chatId
  })()
}

/** `ownerId` has each of `contactIds` as a contact. */
export function insertContacts(db: SeedDb, ownerId: number, contactIds: number[]) {
  const insert = db.prepare('insert into contacts (owner_id, contact_user_id, created_at) values (?, ?, ?)')
  const now = Date.now()
  db.transaction(() => {
    for (const contactId of contactIds) insert.run(ownerId, contactId, now)
  })()
}

export interface SeedStory {
  userId: number
  createdAt: number
  /** default: created_at + 24 h */
  expiresAt?: number
  mediaPath?: string
}

/** Inserts stories (public, images); returns their ids. */
export function insertStories(db: SeedDb, stories: Iterable<SeedStory>): number[] {
  const insert = db.prepare('insert into stories (user_id, media_path, created_at, expires_at) values (?, ?, ?, ?)')
  const ids: number[] = []
  db.transaction(() => {
    let i = 0
    for (const story of stories) {
      const path = story.mediaPath ?? `seed${(i++).toString(36).padStart(18, '0')}.png`
      ids.push(Number(insert.run(story.userId, path, story.createdAt, story.expiresAt ?? story.createdAt + 86_400_000).lastInsertRowid))
    }
  })()
  return ids
}
