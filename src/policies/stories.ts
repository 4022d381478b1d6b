/**
 * Who sees a story: its author always; nobody on either side of a block with the author; then
 * its privacy: everyone, the author's contacts (the people the author added), or the users the
 * author selected.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely'
import type { StoryRow } from '../db/tables.js'
import { blockedEitherWay } from './blocks.js'
import { keepsAsContact } from './sight.js'
import { col, operand, type Operand } from './sql.js'

/** Whether a story's privacy admits a viewer who is not its author and not blocked either way. */
export function privacyAdmits(privacy: StoryRow['privacy_type'], viewer: { isContact: boolean; isSelected: boolean }): boolean {
  if (privacy === 'everyone') return true
  if (privacy === 'contacts') return viewer.isContact
  return viewer.isSelected
}

/** Whether the story under `alias` is visible to `viewer` (its expiry aside). */
export const storyVisibleTo = (alias: string, viewer: Operand): RawBuilder<SqlBool> => {
  const author = col(`${alias}.user_id`)
  const privacy = col(`${alias}.privacy_type`)
  return sql<SqlBool>`(${author} = ${operand(viewer)} or (not ${blockedEitherWay(author, viewer)} and (
    ${privacy} = 'everyone'
    or (${privacy} = 'contacts' and ${keepsAsContact(author, viewer)})
    or (${privacy} = 'selected' and exists (select 1 from story_allowed_users sa where sa.story_id = ${col(`${alias}.id`)} and sa.user_id = ${operand(viewer)})))))`
}
