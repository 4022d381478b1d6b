/**
 * The music library: each user's own list of tracks. A track is an audio file the user uploaded,
 * or the audio file of a message the user can read (named by `source_message_id`). Nobody else
 * sees or removes it.
 */
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { UserMusicRow, UserRow } from '../../db/tables.js'
import { conflict, invalidFile, notFound, validationError } from '../../http/errors.js'
import { iso } from '../../lib/time.js'
import * as files from '../files/index.js'
import * as messages from '../messages/index.js'
import { uploadUrl } from '../users/index.js'
import * as repo from './repo.js'

export interface NewTrack {
  file_url: string
  artist: string
  title: string
  file_name?: string
  duration?: number
  source_message_id?: number
}

/** `/uploads/<path>` (a file_url as messages give it) or the bare path → the path. */
const pathOf = (fileUrl: string) => (fileUrl.startsWith('/uploads/') ? fileUrl.slice('/uploads/'.length) : fileUrl)

export async function add(ctx: AppContext, me: UserRow, input: NewTrack) {
  const artist = input.artist.trim()
  const title = input.title.trim()
  if (artist === '') throw validationError('artist must not be empty')
  if (title === '') throw validationError('title must not be empty')
  const path = pathOf(input.file_url)
  let fileName: string
  if (input.source_message_id !== undefined) {
    // someone else's file, as a message I can read carries it
    const { row } = await messages.readableMessage(ctx, me, input.source_message_id)
    if (row.file_path === null || row.file_path !== path) throw invalidFile('file_url must be the file of source_message_id')
    if (row.file_type !== 'audio') throw validationError('The message’s file is not audio')
    fileName = row.file_name ?? 'track'
  } else {
    const upload = await files.requireUploaded(ctx, me.id, path)
    if (upload.file_type !== 'audio') throw validationError(`file_url must be an audio file; this one is ${upload.file_type}`)
    fileName = upload.file_name
  }
  try {
    const row = await repo.insert(ctx.db, {
      user_id: me.id,
      file_path: path,
      file_name: input.file_name?.trim() || fileName,
      artist,
      title,
      duration: input.duration ?? null,
      source_message_id: input.source_message_id ?? null,
      added_at: ctx.clock.now(),
    })
    return present(row)
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('This track is already in your library')
    throw error
  }
}

export async function remove(ctx: AppContext, me: UserRow, id: number) {
  if (!(await repo.remove(ctx.db, me.id, id))) throw notFound('Track not found')
  return { id, removed: true }
}

export async function list(ctx: AppContext, me: UserRow, page: number, perPage: number) {
  const { rows, total } = await repo.list(ctx.db, me.id, page, perPage)
  return { items: rows.map(present), total }
}

function present(row: UserMusicRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    file_url: uploadUrl(row.file_path)!,
    file_name: row.file_name,
    artist: row.artist,
    title: row.title,
    duration: row.duration,
    source_message_id: row.source_message_id,
    added_at: iso(row.added_at),
  }
}
