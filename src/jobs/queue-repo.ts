/** The SQL of the work queue (jobs/queue.ts): one table, `work_queue`, on SQLite and PostgreSQL. */
import { sql } from 'kysely'
import type { Dialect } from '../config.js'
import type { Db } from '../db/database.js'
import type { WorkQueueRow } from '../db/tables.js'

export interface NewItem {
  kind: string
  key: string
  dueAt: number
  /** when its work began (default: dueAt) */
  since?: number
  ref?: number | null
  data?: string | null
}

/**
 * Adds an item. One that exists (same kind and key) has its revision moved (so a run that took it
 * before this write does not remove it), and with `replace` takes the new due time and ref, its
 * attempts starting again; with `keep` it keeps its time (a retry waiting stays waiting).
 */
export async function put(db: Db, item: NewItem, now: number, onExisting: 'keep' | 'replace') {
  await db
    .insertInto('work_queue')
    .values({
      kind: item.kind,
      item_key: item.key,
      due_at: item.dueAt,
      since: item.since ?? item.dueAt,
      ref: item.ref ?? null,
      data: item.data ?? null,
      created_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['kind', 'item_key']).doUpdateSet((eb) =>
        onExisting === 'replace'
          ? {
              revision: eb('work_queue.revision', '+', 1),
              due_at: eb.ref('excluded.due_at'),
              since: eb.ref('excluded.since'),
              ref: eb.ref('excluded.ref'),
              attempts: 0,
              last_error: null,
            }
          : { revision: eb('work_queue.revision', '+', 1) },
      ),
    )
    .execute()
}

export async function remove(db: Db, kind: string, key: string) {
  await db.deleteFrom('work_queue').where('kind', '=', kind).where('item_key', '=', key).execute()
}

/**
 * Claims up to `limit` due items of these kinds for `instance` until `until`: items nobody holds,
 * or whose holder's claim ran out (it crashed). One statement; on PostgreSQL the rows another
 * instance is claiming at the same moment are skipped (FOR UPDATE SKIP LOCKED), on SQLite the
 * single writer makes it atomic. So an item is held by one instance at a time.
 */
export function claim(
  db: Db,
  dialect: Dialect,
  instance: string,
  now: number,
  until: number,
  limit: number,
  kinds: readonly string[],
): Promise<WorkQueueRow[]> {
  return db
    .updateTable('work_queue')
    .set({ claimed_by: instance, claimed_until: until })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('work_queue')
        .select('id')
        .where('due_at', '<=', now)
        .where('kind', 'in', kinds)
        .where((w) => w.or([w('claimed_until', 'is', null), w('claimed_until', '<=', now)]))
        .orderBy('due_at')
        .orderBy('id')
        .limit(limit)
        .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
    )
    .returningAll()
    .execute()
}

/** Keeps this instance's claims on items still being worked on. */
export async function extend(db: Db, instance: string, ids: readonly number[], until: number) {
  if (ids.length === 0) return
  await db.updateTable('work_queue').set({ claimed_until: until }).where('claimed_by', '=', instance).where('id', 'in', ids).execute()
}

/** Done: removes the item, unless something was added to it meanwhile (its revision moved): then it is let go to run again. */
export async function finish(db: Db, item: Pick<WorkQueueRow, 'id' | 'revision'>, instance: string) {
  const removed = await db
    .deleteFrom('work_queue')
    .where('id', '=', item.id)
    .where('claimed_by', '=', instance)
    .where('revision', '=', item.revision)
    .executeTakeFirst()
  if (Number(removed.numDeletedRows) === 0) await letGo(db, item.id, instance, {})
}

/** Lets a claimed item go, with new values (its next due time, attempts…). */
export async function letGo(
  db: Db,
  id: number,
  instance: string,
  values: Partial<Pick<WorkQueueRow, 'due_at' | 'attempts' | 'since' | 'ref' | 'last_error'>>,
) {
  await db
    .updateTable('work_queue')
    .set({ ...values, claimed_by: null, claimed_until: null })
    .where('id', '=', id)
    .where('claimed_by', '=', instance)
    .execute()
}

/** Lets every claim of this instance go (it stops). */
export async function releaseAll(db: Db, instance: string) {
  await db.updateTable('work_queue').set({ claimed_by: null, claimed_until: null }).where('claimed_by', '=', instance).execute()
}

/**
 * When the next item of these kinds that this instance does not hold may be claimed: its due time,
 * or, held by another instance, the later of that and the end of the claim. Null: none.
 */
export async function nextDue(db: Db, instance: string, kinds: readonly string[]): Promise<number | null> {
  const row = await db
    .selectFrom('work_queue')
    .select(
      sql<number | string | null>`min(case when claimed_until is null or claimed_until < due_at then due_at else claimed_until end)`.as(
        'at',
      ),
    )
    .where('kind', 'in', kinds)
    .where((w) => w.or([w('claimed_by', 'is', null), w('claimed_by', '<>', instance)]))
    .executeTakeFirst()
  return row?.at === null || row?.at === undefined ? null : Number(row.at)
}
