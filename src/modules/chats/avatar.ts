/** Group and channel avatars are uploaded files (POST /files/upload), referenced by path. */
import type { AppContext } from '../../context.js'
import { invalidFile } from '../../http/errors.js'

/** The stored avatar path for an uploaded file of this user; null clears it; 400 invalid_file otherwise. */
export async function resolveAvatar(_ctx: AppContext, _userId: number, path: string | null): Promise<string | null> {
  if (path === null) return null
  // TODO(#5): resolved through the files module once uploads land; nothing can have been uploaded before.
  throw invalidFile()
}
