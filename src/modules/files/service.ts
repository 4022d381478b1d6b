/**
 * Files: storing uploads (each content once, each upload its own unguessable path), reading them
 * back, and the attachments other modules (messages, avatars) may reference.
 */
import { createHash, randomBytes, type Hash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { AppContext } from '../../context.js'
import type { FileObjectRow, PreviewSize, UserRow } from '../../db/tables.js'
import { isForeignKeyViolation } from '../../db/errors.js'
import { invalidFile, notFound, payloadTooLarge } from '../../http/errors.js'
import { iso } from '../../lib/time.js'
import type { Source } from '../../storage/storage.js'
import { isPremium, uploadUrl } from '../users/index.js'
import { detectType, HEAD_BYTES } from './detect.js'
import * as repo from './repo.js'
import type { FileView } from './schemas.js'
import { makeThumbnail } from './thumbnails.js'

/** What messages, stories and avatars store about an uploaded file. */
export interface Attachment {
  file_path: string
  file_type: string
  file_name: string
  file_size: number
  thumbnail_path: string | null
  preview_size: PreviewSize
  mime_type: string
}

/** The caller's upload cap in bytes: PREMIUM_MAX_UPLOAD_BYTES while premium, else MAX_UPLOAD_BYTES. */
export function capFor(ctx: AppContext, user: UserRow): number {
  return isPremium(user, ctx.clock.now()) ? ctx.config.premiumMaxUploadBytes : ctx.config.maxUploadBytes
}

const tooLarge = (limit: number) => payloadTooLarge(`The file is larger than your upload limit of ${limit} bytes`)

/** Counts, hashes and keeps the first bytes of what passes through; refuses more than `limit` bytes. */
export class Meter {
  size = 0
  private head: Buffer[] = []
  private headLength = 0

  constructor(
    private readonly limit: number,
    /** the running SHA-256, or null when this stream's bytes are not to be hashed */
    readonly hash: Hash | null = createHash('sha256'),
    private readonly overLimit: () => Error = () => tooLarge(limit),
  ) {}

  /** Passes `source` on; throws the moment the limit is passed, so the rest is never read. */
  async *through(source: Source): AsyncGenerator<Uint8Array> {
    for await (const chunk of source) {
      this.size += chunk.length
      if (this.size > this.limit) throw this.overLimit()
      this.hash?.update(chunk)
      if (this.headLength < HEAD_BYTES) {
        this.head.push(Buffer.from(chunk.subarray(0, HEAD_BYTES - this.headLength)))
        this.headLength += Math.min(chunk.length, HEAD_BYTES - this.headLength)
      }
      yield chunk
    }
  }

  firstBytes(): Buffer {
    return Buffer.concat(this.head)
  }
}

/** Bytes received into a temporary (or part) object, with their totals. */
export interface Received {
  key: string
  size: number
  hash: string
  head: Buffer
}

/** A client's file name, made safe to store and to put in a Content-Disposition header. */
export function cleanFileName(name: string | undefined | null): string {
  const base = (name ?? '').split(/[/\\]/).pop() ?? ''
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  const printable = base.replace(/[\u0000-\u001f\u007f]/g, '')
  const clean = printable.trim().slice(0, 255)
  return clean === '' || clean === '.' || clean === '..' ? 'file' : clean
}

/** Streams one upload into storage under the caller's cap and records it. */
export async function upload(
  ctx: AppContext,
  me: UserRow,
  source: Source,
  fileName: string | undefined,
  origin: string | null = null,
): Promise<FileView> {
  const meter = new Meter(capFor(ctx, me))
  const key = await ctx.storage.putTemp(meter.through(source))
  return record(ctx, me, { key, size: meter.size, hash: meter.hash!.digest('hex'), head: meter.firstBytes() }, fileName, origin)
}

/**
 * Turns received bytes into the caller's upload: the first copy of a content becomes its object
 * (type detected, thumbnail made); a later identical one is dropped in favour of it. Either way the
 * upload gets its own row and random path.
 */
export async function record(
  ctx: AppContext,
  me: UserRow,
  received: Received,
  fileName: string | undefined,
  origin: string | null,
): Promise<FileView> {
  const name = randomBytes(16).toString('base64url')
  const insert = (object: FileObjectRow) =>
    repo.insertUpload(ctx.db, {
      owner_id: me.id,
      hash: object.hash,
      path: `${name}.${object.ext}`,
      thumbnail_path: object.thumbnail_key ? `${name}.thumb.webp` : null,
      original_name: cleanFileName(fileName),
      size: object.size,
      mime_type: object.mime_type,
      source: origin,
      created_at: ctx.clock.now(),
    })
  const existing = await repo.findObject(ctx.db, received.hash)
  if (existing) {
    try {
      // the upload's row holds the object (a foreign key) before this copy of the bytes goes
      const row = await insert(existing)
      await ctx.storage.delete(received.key)
      return present({ ...existing, ...row })
    } catch (error) {
      // the collector removed the object in between: this copy becomes it again
      if (!isForeignKeyViolation(error)) throw error
    }
  }
  const object = await storeObject(ctx, received)
  return present({ ...object, ...(await insert(object)) })
}

async function storeObject(ctx: AppContext, received: Received): Promise<FileObjectRow> {
  const detected = await detectType(received.head)
  const shard = received.hash.slice(0, 2)
  const storageKey = `objects/${shard}/${received.hash}`
  await ctx.storage.move(received.key, storageKey)
  const thumbnail =
    detected.file_type === 'image'
      ? await makeThumbnail(detected.mime_type, received.size, async () => (await ctx.storage.open(storageKey))!.stream)
      : null
  let thumbnailKey: string | null = null
  if (thumbnail) {
    thumbnailKey = `thumbs/${shard}/${received.hash}.webp`
    await ctx.storage.move(await ctx.storage.putTemp(Readable.from([thumbnail.webp])), thumbnailKey)
  }
  return repo.insertObject(ctx.db, {
    hash: received.hash,
    storage_key: storageKey,
    size: received.size,
    mime_type: detected.mime_type,
    ext: detected.ext,
    file_type: detected.file_type,
    width: thumbnail?.width ?? null,
    height: thumbnail?.height ?? null,
    thumbnail_key: thumbnailKey,
    preview_size: thumbnail?.preview_size ?? 'none',
    created_at: ctx.clock.now(),
  })
}

type UploadRow = repo.UploadWithObject

export function present(row: Omit<UploadRow, 'storage_key' | 'thumbnail_key'>): FileView {
  return {
    id: row.id,
    path: row.path,
    url: uploadUrl(row.path)!,
    size: row.size,
    mime_type: row.mime_type,
    hash: row.hash,
    file_name: row.original_name,
    file_type: row.file_type,
    preview_size: row.preview_size,
    thumbnail_path: row.thumbnail_path,
    thumbnail_url: uploadUrl(row.thumbnail_path),
    width: row.width,
    height: row.height,
    created_at: iso(row.created_at),
  }
}

/** The caller's file made by a finished resumable upload (`chunked:<id>`, `tus:<id>`), if any. */
export async function finished(ctx: AppContext, me: UserRow, source: string): Promise<FileView | null> {
  const row = await repo.findOwnUploadBySource(ctx.db, me.id, source)
  return row ? present(row) : null
}

/**
 * The attachment of a path this user uploaded; 400 invalid_file for any other path (never
 * uploaded, or uploaded by someone else: a path is proof of upload only for its uploader).
 */
export async function requireUploaded(ctx: AppContext, userId: number, filePath: string): Promise<Attachment> {
  const row = await repo.findOwnUploadByPath(ctx.db, userId, filePath)
  if (!row) throw invalidFile()
  return {
    file_path: row.path,
    file_type: row.file_type,
    file_name: row.original_name,
    file_size: row.size,
    thumbnail_path: row.thumbnail_path,
    preview_size: row.preview_size,
    mime_type: row.mime_type,
  }
}

/** What a download serves: the object, its type and validator, the name to save it as. */
export interface Servable {
  key: string
  size: number
  mime_type: string
  etag: string
  file_name: string
}

/** GET /files/{id}: its uploader, or a member of a chat where a message carries it; 404 for anyone else. */
export async function readable(ctx: AppContext, me: UserRow, id: number): Promise<Servable> {
  const row = await repo.findUpload(ctx.db, id)
  if (!row || (row.owner_id !== me.id && !(await repo.isSharedWith(ctx.db, row.path, me.id)))) throw notFound('File not found')
  return { key: row.storage_key, size: row.size, mime_type: row.mime_type, etag: row.hash, file_name: row.original_name }
}

/** Paths this server hands out: 22 random base64url characters and an extension. */
const SERVED_PATH = /^[A-Za-z0-9_-]{22}\.(?:thumb\.webp|[a-z0-9]{1,10})$/

/**
 * GET /uploads/{path}: anyone holding the path (128 random bits, learnt from the upload response
 * or a message), as `<img src>` needs; 404 for any other string.
 */
export async function served(ctx: AppContext, path: string): Promise<Servable> {
  const thumbnail = path.endsWith('.thumb.webp')
  const row = SERVED_PATH.test(path) ? await repo.findByServedPath(ctx.db, path, thumbnail) : undefined
  if (!row || (thumbnail && !row.thumbnail_key)) throw notFound('File not found')
  if (!thumbnail) return { key: row.storage_key, size: row.size, mime_type: row.mime_type, etag: row.hash, file_name: row.original_name }
  const stat = await ctx.storage.stat(row.thumbnail_key!)
  if (!stat) throw notFound('File not found')
  const name = `${row.original_name.replace(/\.[^.]*$/, '')}.thumb.webp`
  return { key: row.thumbnail_key!, size: stat.size, mime_type: 'image/webp', etag: `${row.hash}.thumb`, file_name: name }
}

/** The upload a served path names (`withThumbnail`: also by its thumbnail's path). */
export const uploadByServedPath = (ctx: AppContext, path: string, withThumbnail: boolean) =>
  repo.findByServedPath(ctx.db, path, withThumbnail)
/** Whether the file at `path` was sent into a chat `userId` is in. */
export const isSharedWith = (ctx: AppContext, path: string, userId: number) => repo.isSharedWith(ctx.db, path, userId)
/** Records an upload row (a copy of stored content under a new path, e.g. a bot's own copy). */
export const insertUploadRow = (ctx: AppContext, row: Parameters<typeof repo.insertUpload>[1]) => repo.insertUpload(ctx.db, row)
