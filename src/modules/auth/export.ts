/**
 * `GET auth/export`: the signed-in person's data as one JSON document (the answer's envelope,
 * served as an attachment): profile, settings, sessions (tokens masked), contacts, blocked users,
 * chats, the messages they sent, what they saved, stories and premium orders. Other people appear
 * as ids and usernames only (a saved message someone else sent: its ids, not its text). Written
 * as a stream, a page of rows at a time (export-repo.ts), so a large account costs memory for one
 * page; once per ACCOUNT_EXPORT_RATE_LIMIT window per user.
 */
import { Readable } from 'node:stream'
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { rateLimitedFor } from '../../http/errors.js'
import { iso, isoOrNull } from '../../lib/time.js'
import { windowCounts } from '../../lib/window-counts.js'
import { avatarUrl } from '../users/index.js'
import { isPremium } from '../users/index.js'
import { presentOrder } from '../premium/index.js'
import * as sessions from '../sessions/index.js'
import * as settings from '../settings/index.js'
import * as users from '../users/index.js'
import * as rows from './export-repo.js'
import { isTwoFactorEnabled } from './two-factor.js'

const PAGE = 500
export const EXPORT_FORMAT = 'tern-export-1'

/** Counts this export against the user's allowance; 429 with Retry-After past it. */
async function takeAllowance(ctx: AppContext, userId: number) {
  const wait = await windowCounts(ctx, 'account-export').take(String(userId), ctx.config.accountExportRateLimit)
  if (wait !== null) throw rateLimitedFor(wait, 'One data export at a time')
}

function profileOf(user: UserRow, now: number) {
  return {
    user_id: user.id,
    username: user.username,
    display_name: user.display_name,
    email: user.email,
    email_verified: user.email_verified === 1,
    phone: user.phone,
    bio: user.bio,
    status: user.status,
    status_emoji: user.status_emoji,
    birthday: user.birthday,
    link: user.link,
    avatar_url: avatarUrl(user.avatar),
    privacy: { last_seen: user.privacy_last_seen, phone: user.privacy_phone, avatar: user.privacy_avatar },
    two_factor_enabled: isTwoFactorEnabled(user),
    has_password: user.password_hash !== null,
    is_premium: isPremium(user, now),
    premium_expires_at: isoOrNull(user.premium_expires_at),
    created_at: iso(user.created_at),
    last_seen: isoOrNull(user.last_seen),
  }
}

/** Every page of a keyset walk, mapped, as one JSON array's items. */
async function* arrayOf<R, K>(
  fetch: (after: K) => Promise<R[]>,
  keyOf: (row: R) => K,
  start: K,
  shape: (row: R) => unknown,
): AsyncGenerator<string> {
  yield '['
  let after = start
  let first = true
  for (;;) {
    const page = await fetch(after)
    for (const row of page) {
      yield (first ? '' : ',') + JSON.stringify(shape(row))
      first = false
    }
    if (page.length < PAGE) break
    after = keyOf(page[page.length - 1])
  }
  yield ']'
}

/** The messages I sent, chat by chat. */
async function* sentMessages(ctx: AppContext, userId: number): AsyncGenerator<string> {
  yield '['
  let first = true
  let afterChat = 0
  for (;;) {
    const chatIds = await rows.chatIdsPage(ctx.db, userId, afterChat, PAGE)
    for (const chatId of chatIds) {
      let afterSeq = 0
      for (;;) {
        const page = await rows.sentInChatPage(ctx.db, userId, chatId, afterSeq, PAGE)
        for (const m of page) {
          yield (first ? '' : ',') +
            JSON.stringify({
              message_id: m.id,
              chat_id: m.chat_id,
              content: m.content,
              reply_to_id: m.reply_to_id,
              file_name: m.file_name,
              file_type: m.file_type,
              file_size: m.file_size,
              timestamp: iso(m.created_at),
              edited_at: isoOrNull(m.edited_at),
            })
          first = false
        }
        if (page.length < PAGE) break
        afterSeq = page[page.length - 1].seq
      }
    }
    if (chatIds.length < PAGE) break
    afterChat = chatIds[chatIds.length - 1]
  }
  yield ']'
}

async function* allSessions(ctx: AppContext, userId: number, currentSessionId: number): AsyncGenerator<string> {
  yield '['
  let first = true
  for (let page = 1; ; page++) {
    const { items, total } = await sessions.listSessions(ctx, userId, currentSessionId, page, 100)
    for (const item of items) {
      yield (first ? '' : ',') + JSON.stringify(item)
      first = false
    }
    if (items.length < 100 || page * 100 >= total) break
  }
  yield ']'
}

async function* document(ctx: AppContext, user: UserRow, currentSessionId: number): AsyncGenerator<string> {
  const now = ctx.clock.now()
  const db = ctx.db
  const id = user.id
  yield `{"success":true,"data":{"format":${JSON.stringify(EXPORT_FORMAT)},"exported_at":${JSON.stringify(iso(now))}`
  yield `,"profile":${JSON.stringify(profileOf(user, now))}`
  yield `,"settings":${JSON.stringify((await settings.get(ctx, user)).settings)}`
  yield ',"sessions":'
  yield* allSessions(ctx, id, currentSessionId)
  yield ',"contacts":'
  yield* arrayOf(
    (after: number) => rows.contactsPage(db, id, after, PAGE),
    (r) => r.id,
    0,
    (r) => ({ user_id: r.user_id, username: r.username, custom_name: r.custom_name, added_at: iso(r.created_at) }),
  )
  yield ',"blocked_users":'
  yield* arrayOf(
    (after: number) => rows.blockedPage(db, id, after, PAGE),
    (r) => r.user_id,
    0,
    (r) => ({ user_id: r.user_id, username: r.username, reason: r.reason, blocked_at: iso(r.created_at) }),
  )
  yield ',"chats":'
  yield* arrayOf(
    (after: number) => rows.chatsPage(db, id, after, PAGE),
    (r) => r.chat_id,
    0,
    (r) => ({
      chat_id: r.chat_id,
      type: r.chat_type,
      title: r.chat_type === 'personal' ? null : r.title,
      role: r.role,
      joined_at: iso(r.joined_at),
      peer: r.peer_id === null ? null : { user_id: r.peer_id, username: r.peer_username },
    }),
  )
  yield ',"messages_sent":'
  yield* sentMessages(ctx, id)
  yield ',"saved_messages":'
  yield* arrayOf(
    (after: number) => rows.savedPage(db, id, after, PAGE),
    (r) => r.id,
    0,
    (r) => {
      const mine = r.sender_id === id && r.deleted_for_all === 0
      return {
        message_id: r.message_id,
        chat_id: r.chat_id,
        sender: { user_id: r.sender_id, username: r.sender_username },
        saved_at: iso(r.saved_at),
        ...(mine ? { content: r.content, timestamp: iso(r.created_at) } : {}),
      }
    },
  )
  yield ',"stories":'
  yield* arrayOf(
    (after: number) => rows.storiesPage(db, id, after, PAGE),
    (r) => r.id,
    0,
    (r) => ({
      story_id: r.id,
      media_type: r.media_type,
      caption: r.caption,
      privacy: r.privacy_type,
      view_count: r.view_count,
      like_count: r.like_count,
      created_at: iso(r.created_at),
      expires_at: iso(r.expires_at),
    }),
  )
  yield ',"premium_orders":'
  // as GET /premium/orders shows them, with the months each bought
  yield* arrayOf(
    (after: number) => rows.ordersPage(db, id, after, PAGE),
    (r) => r.id,
    0,
    (r) => ({ ...presentOrder(r), months: r.months }),
  )
  yield '}}'
}

/**
 * The export of the signed-in user: its file name and the document as a stream. The allowance
 * is taken and the user read before anything is written, so those failures are ordinary error
 * answers; a failure halfway through ends the stream (the download is cut short, not half valid).
 */
export async function exportAccount(
  ctx: AppContext,
  userId: number,
  currentSessionId: number,
): Promise<{ filename: string; stream: Readable }> {
  await takeAllowance(ctx, userId)
  const user = await users.getUser(ctx, userId)
  const day = iso(ctx.clock.now()).slice(0, 10)
  const stream = Readable.from(document(ctx, user, currentSessionId), { objectMode: false })
  stream.on('error', (error) => ctx.log.warn({ userId, err: error }, 'a data export failed part way'))
  return { filename: `tern-export-${user.id}-${day}.json`, stream }
}
