import type { Insertable } from 'kysely'
import type { Db } from '../../db/database.js'
import type { UserMusicRow, UserMusicTable } from '../../db/tables.js'
import { paged } from '../../db/page.js'

export function insert(db: Db, row: Insertable<UserMusicTable>): Promise<UserMusicRow> {
  return db.insertInto('user_music').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function remove(db: Db, userId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('user_music').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

export async function list(db: Db, userId: number, page: number, perPage: number) {
  const [rows, count] = await Promise.all([
    db.selectFrom('user_music').selectAll().where('user_id', '=', userId).orderBy('id', 'desc').$call(paged(page, perPage)).execute(),
    db
      .selectFrom('user_music')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}
