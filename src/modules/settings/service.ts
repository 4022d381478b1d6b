/**
 * Per-user settings: one JSON object of preferences (theme, notifications, language, and whatever
 * else a client keeps there), the defaults filled in for what the user never changed.
 */
import type { AppContext } from '../../context.js'
import type { UserRow } from '../../db/tables.js'
import { inTransaction } from '../../events/outbox.js'
import { validationError } from '../../http/errors.js'
import * as repo from './repo.js'

export const DEFAULT_SETTINGS: Readonly<Record<string, unknown>> = Object.freeze({ theme: 'system', notifications: true, language: 'en' })
/** the whole stored object, as JSON */
export const SETTINGS_MAX_BYTES = 16 * 1024

/** Defaults first, then the user's own values (as own properties of a fresh object). */
function merged(stored: Record<string, unknown>): Record<string, unknown> {
  const settings = new Map(Object.entries(DEFAULT_SETTINGS))
  for (const [key, value] of Object.entries(stored)) settings.set(key, value)
  return Object.fromEntries(settings)
}

export async function get(ctx: AppContext, me: UserRow) {
  return { user_id: me.id, settings: merged(await repo.read(ctx.db, me.id)) }
}

/** Sets one key to a JSON value; `null` puts the key back to its default (or removes it). */
export async function update(ctx: AppContext, me: UserRow, key: string, value: unknown) {
  const stored = await inTransaction(ctx, async (trx, events) => {
    const current = new Map(Object.entries(await repo.readForUpdate(trx, me.id, events.now)))
    if (value === null) current.delete(key)
    else current.set(key, value)
    const next = Object.fromEntries(current)
    const bytes = Buffer.byteLength(JSON.stringify(next))
    if (bytes > SETTINGS_MAX_BYTES) throw validationError(`value: the settings would take ${bytes} bytes, more than ${SETTINGS_MAX_BYTES}`)
    await repo.write(trx, me.id, next, events.now)
    return next
  })
  return { user_id: me.id, settings: merged(stored) }
}

/** What the user's settings say about notifications: `notifications: false` silences all, `muted_chats` (chat ids) some. */
export interface NotificationPrefs {
  enabled: boolean
  mutedChats: ReadonlySet<number>
}

/** The user's notification preferences (push reads them before each notification). Stored values are the client's: anything odd counts as unset. */
export async function notificationPrefs(ctx: AppContext, userId: number): Promise<NotificationPrefs> {
  const stored = new Map(Object.entries(await repo.read(ctx.db, userId)))
  const muted = stored.get('muted_chats')
  const mutedChats = new Set<number>()
  if (Array.isArray(muted)) {
    for (const item of muted.slice(0, 10_000)) {
      const id = typeof item === 'string' && /^\d{1,15}$/.test(item) ? Number(item) : item
      if (typeof id === 'number' && Number.isSafeInteger(id) && id > 0) mutedChats.add(id)
    }
  }
  return { enabled: stored.get('notifications') !== false, mutedChats }
}
