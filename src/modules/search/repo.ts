import { sql } from 'kysely'
import type { Dialect } from '../../config.js'
import type { Db } from '../../db/database.js'
import { userNameMatches } from '../../db/dialect.js'
import { usableAccount } from '../../policies/accounts.js'
import { blockedEitherWay } from '../../policies/blocks.js'
import { col } from '../../policies/sql.js'
import { paged } from '../../db/page.js'

/** How a match ranks: the exact username, a username prefix, a display-name prefix, anything else. */
const rank = (q: string) => sql<number>`case
  when lower(u.username) = ${q} then 0
  when substr(lower(u.username), 1, ${q.length}) = ${q} then 1
  when substr(lower(u.display_name), 1, ${q.length}) = ${q} then 2
  else 3 end`

/**
 * Active users matching `q` (lower-cased) other than `me`, without anyone a block stands between,
 * best ranked first, then by username; with whether `me` has each as a contact.
 */
export async function searchUsers(db: Db, dialect: Dialect, me: number, q: string, page: number, perPage: number) {
  const matches = db
    .selectFrom('users as u')
    .where(userNameMatches(dialect, q))
    .where(usableAccount('u'))
    .where('u.id', '!=', me)
    .where(({ not }) => not(blockedEitherWay(col('u.id'), me)))
  const [rows, count] = await Promise.all([
    matches
      .leftJoin('contacts as k', (join) => join.on('k.owner_id', '=', me).onRef('k.contact_user_id', '=', 'u.id'))
      .selectAll('u')
      .select('k.id as contact_id')
      .orderBy(rank(q))
      .orderBy(sql`lower(u.username)`)
      .$call(paged(page, perPage))
      .execute(),
    matches.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** Records a search (the same one again moves to the top) and keeps the newest `keep`. */
export async function remember(db: Db, userId: number, query: string, type: string, now: number, keep: number) {
  await db
    .insertInto('recent_searches')
    .values({ user_id: userId, search_query: query, search_type: type, created_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'search_type', 'search_query']).doUpdateSet({ created_at: now }))
    .execute()
  const kept = db
    .selectFrom('recent_searches')
    .select('id')
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(keep)
  await db.deleteFrom('recent_searches').where('user_id', '=', userId).where('id', 'not in', kept).execute()
}

export function history(db: Db, userId: number) {
  return db
    .selectFrom('recent_searches')
    .select(['search_query', 'search_type', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute()
}

export async function clear(db: Db, userId: number) {
  await db.deleteFrom('recent_searches').where('user_id', '=', userId).execute()
}
