/**
 * Chunked, resumable uploads (`/uploads/multipart`, `/uploads/complete`). A session's bytes so far
 * are one storage object; its size is the offset, so an interrupted chunk keeps whatever reached the
 * disk and the client resumes from there. Chunks that arrive in order on this instance also feed a
 * running SHA-256, so completing does not read the file again; otherwise completing hashes it.
 * Abandoned sessions expire UPLOAD_SESSION_TTL_SECONDS after their last chunk and are swept.
 */
import { createHash, randomBytes, type Hash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { AppContext } from '../../context.js'
import type { UploadSessionRow, UserRow } from '../../db/tables.js'
import { AppError, conflict, notFound, payloadTooLarge, validationError } from '../../http/errors.js'
import { iso } from '../../lib/time.js'
import type { Source } from '../../storage/storage.js'
import { HEAD_BYTES } from './detect.js'
import * as repo from './repo.js'
import type { FileView, StartUploadBody, UploadSessionView } from './schemas.js'
import { capFor, cleanFileName, finished, Meter, record } from './service.js'

/** Sessions receiving a chunk or completing on this instance: one request at a time per session. */
const busy = new Set<string>()
/** Running hashes of sessions whose chunks came in order here, with the offset they cover. */
const running = new Map<string, { offset: number; hash: Hash }>()

const SWEEP_BATCH = 100

function view(session: UploadSessionRow, offset: number): UploadSessionView {
  return { session_id: session.id, offset, size: session.size, expires_at: iso(session.expires_at) }
}

const offsetOf = async (ctx: AppContext, session: UploadSessionRow) => (await ctx.storage.stat(session.part_key))?.size ?? 0

async function ownSession(ctx: AppContext, me: UserRow, sessionId: string) {
  const session = await repo.findOwnSession(ctx.db, me.id, sessionId)
  if (!session || session.expires_at < ctx.clock.now()) throw notFound('Upload session not found')
  return session
}

/** Runs `work` as the only request of this upload session on this instance; 409 while another one is. */
async function exclusively<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
  if (busy.has(sessionId)) throw conflict('Another request of this upload session is in progress')
  busy.add(sessionId)
  try {
    return await work()
  } finally {
    busy.delete(sessionId)
  }
}

/** 409 naming where the session stands; also in the `Upload-Offset` header. */
const offsetConflict = (message: string, offset: number) => new AppError(409, 'conflict', message, { 'upload-offset': String(offset) })

/** Starts a session; the declared size must fit the caller's cap. */
export async function start(ctx: AppContext, me: UserRow, input: StartUploadBody): Promise<UploadSessionView> {
  const cap = capFor(ctx, me)
  if (input.size > cap) throw payloadTooLarge(`The file is larger than your upload limit of ${cap} bytes`)
  const id = randomBytes(16).toString('base64url')
  const now = ctx.clock.now()
  const session: UploadSessionRow = {
    id,
    owner_id: me.id,
    file_name: cleanFileName(input.file_name),
    size: input.size,
    mime_type: input.mime_type ?? 'application/octet-stream',
    part_key: `parts/${id}`,
    expires_at: now + ctx.config.uploadSessionTtlSeconds * 1000,
    created_at: now,
  }
  // The part exists from the start, so an empty file completes like any other.
  await ctx.storage.append(session.part_key, Readable.from([]))
  await repo.insertSession(ctx.db, session)
  return view(session, 0)
}

export async function status(ctx: AppContext, me: UserRow, sessionId: string): Promise<UploadSessionView> {
  const session = await ownSession(ctx, me, sessionId)
  return view(session, await offsetOf(ctx, session))
}

/** Appends a chunk sent for the session's current offset; 409 with the offset for any other. */
export async function receiveChunk(
  ctx: AppContext,
  me: UserRow,
  sessionId: string,
  offset: number,
  chunk: Source,
): Promise<UploadSessionView> {
  const session = await ownSession(ctx, me, sessionId)
  return exclusively(session.id, async () => {
    const current = await offsetOf(ctx, session)
    if (offset !== current)
      throw offsetConflict(`Wrong offset ${offset}: the session has ${current} bytes; send the chunk at offset ${current}`, current)
    const hashed = running.get(session.id)
    running.delete(session.id)
    const room = session.size - current
    const hash = hashed?.offset === current ? hashed.hash : current === 0 ? createHash('sha256') : null
    const meter = new Meter(room, hash, () =>
      payloadTooLarge(`The chunk goes past the declared size of ${session.size} bytes (${room} bytes left)`),
    )
    await ctx.storage.append(session.part_key, meter.through(chunk))
    const received = current + meter.size
    if (meter.hash) running.set(session.id, { offset: received, hash: meter.hash })
    const expiresAt = ctx.clock.now() + ctx.config.uploadSessionTtlSeconds * 1000
    await repo.extendSession(ctx.db, session.id, expiresAt)
    return view({ ...session, expires_at: expiresAt }, received)
  })
}

/**
 * Verifies the size (and the hash when given) and turns the session into a file. Completing a
 * session again returns the same file, so a client whose first answer was lost can ask once more.
 */
export async function complete(ctx: AppContext, me: UserRow, sessionId: string, expectedHash: string | undefined): Promise<FileView> {
  const source = `chunked:${sessionId}`
  const done = await finished(ctx, me, source)
  if (done) return checked(done, expectedHash)
  const session = await ownSession(ctx, me, sessionId)
  return exclusively(session.id, async () => {
    const size = await offsetOf(ctx, session)
    if (size !== session.size) throw offsetConflict(`The upload is incomplete: ${size} of ${session.size} bytes received`, size)
    const hashed = running.get(session.id)
    const hash = hashed?.offset === size ? hashed.hash.copy().digest('hex') : await hashObject(ctx, session.part_key)
    checked({ hash }, expectedHash)
    const head = await readHead(ctx, session.part_key, size)
    const file = await record(ctx, me, { key: session.part_key, size, hash, head }, session.file_name, source)
    await repo.deleteSession(ctx.db, session.id)
    running.delete(session.id)
    return file
  })
}

function checked<T extends { hash: string }>(file: T, expected: string | undefined): T {
  if (expected !== undefined && expected.toLowerCase() !== file.hash) {
    throw validationError(`hash does not match the received bytes (their SHA-256 is ${file.hash})`)
  }
  return file
}

async function hashObject(ctx: AppContext, key: string): Promise<string> {
  const hash = createHash('sha256')
  const opened = await ctx.storage.open(key)
  if (!opened) throw notFound('Upload session not found')
  for await (const chunk of opened.stream) hash.update(chunk)
  return hash.digest('hex')
}

async function readHead(ctx: AppContext, key: string, size: number): Promise<Buffer> {
  if (size === 0) return Buffer.alloc(0)
  const opened = await ctx.storage.open(key, { start: 0, end: Math.min(size, HEAD_BYTES) - 1 })
  const chunks: Buffer[] = []
  for await (const chunk of opened!.stream) chunks.push(chunk)
  return Buffer.concat(chunks)
}

/** Removes expired sessions and their bytes (skipping any busy here); returns how many went. */
export async function sweepExpired(ctx: AppContext): Promise<number> {
  let removed = 0
  for (;;) {
    const expired = (await repo.listExpiredSessions(ctx.db, ctx.clock.now(), SWEEP_BATCH)).filter((s) => !busy.has(s.id))
    for (const session of expired) {
      await ctx.storage.delete(session.part_key)
      await repo.deleteSession(ctx.db, session.id)
      running.delete(session.id)
    }
    removed += expired.length
    if (expired.length < SWEEP_BATCH) return removed
  }
}
