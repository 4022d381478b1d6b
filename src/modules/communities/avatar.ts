/** Group and channel avatars are uploaded files (POST /files/upload), referenced by path. */
import type { AppContext } from '../../context.js'
import { requireUploaded } from '../files/index.js'

/** The stored avatar path for a file this user uploaded; null clears it; 400 invalid_file otherwise. */
export async function resolveAvatar(ctx: AppContext, userId: number, path: string | null): Promise<string | null> {
  if (path === null) return null
  return (await requireUploaded(ctx, userId, path)).file_path
}
