/** The SQL of discussion-group binds (ChannelBind). */
import type { Db } from '../../db/database.js'

export async function unbind(db: Db, channelId: number) {
  await db.deleteFrom('channel_binds').where('channel_id', '=', channelId).execute()
}

export async function bind(db: Db, channelId: number, groupId: number, now: number) {
  await db.insertInto('channel_binds').values({ channel_id: channelId, group_id: groupId, created_at: now }).execute()
}
