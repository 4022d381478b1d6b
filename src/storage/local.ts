/**
 * Storage in a local directory (`DATA_DIR/uploads`). A key must match a strict pattern (no `..`,
 * no leading dot, no backslash, no NUL), its directory's real path must lie inside the root, and
 * files are opened with O_NOFOLLOW: nothing outside the root is read or written, not even through
 * a symlink planted inside it.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { ByteRange, ObjectStat, Source, Storage } from './storage.js'

const KEY = /^[a-z]+(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}){1,3}$/
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW } = fs.constants

/** Incoming chunks (≤ 64 KiB each) queue up to this much and go to disk in one writev: fewer system calls, and hashing overlaps the write. */
const WRITE_BUFFER = 1024 * 1024

const isMissing = (error: unknown) => ['ENOENT', 'ELOOP', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')

export class LocalStorage implements Storage {
  private readonly root: string

  constructor(root: string) {
    fs.mkdirSync(root, { recursive: true })
    this.root = fs.realpathSync(root)
  }

  /** The file of a key, inside the root; throws ENOENT when its directory does not exist (and `create` is off). */
  private async file(key: string, create = false): Promise<string> {
    if (!KEY.test(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`)
    const full = path.join(this.root, key)
    if (create) await fsp.mkdir(path.dirname(full), { recursive: true })
    const dir = await fsp.realpath(path.dirname(full))
    if (!dir.startsWith(this.root + path.sep)) throw Object.assign(new Error(`storage key ${key} leaves the root`), { code: 'ENOENT' })
    return path.join(dir, path.basename(full))
  }

  async putTemp(source: Source): Promise<string> {
    const key = `tmp/${randomBytes(16).toString('hex')}`
    const file = await this.file(key, true)
    try {
      await pipeline(
        source,
        (await fsp.open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)).createWriteStream({ highWaterMark: WRITE_BUFFER }),
      )
    } catch (error) {
      await fsp.rm(file, { force: true })
      throw error
    }
    return key
  }

  async append(key: string, source: Source): Promise<void> {
    const file = await this.file(key, true)
    await pipeline(
      source,
      (await fsp.open(file, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW)).createWriteStream({ highWaterMark: WRITE_BUFFER }),
    )
  }

  async stat(key: string): Promise<ObjectStat | null> {
    try {
      const stats = await fsp.lstat(await this.file(key))
      return stats.isFile() ? { size: stats.size } : null
    } catch (error) {
      if (isMissing(error)) return null
      throw error
    }
  }

  async open(key: string, range?: ByteRange) {
    let handle: fsp.FileHandle
    try {
      handle = await fsp.open(await this.file(key), O_RDONLY | O_NOFOLLOW)
    } catch (error) {
      if (isMissing(error)) return null
      throw error
    }
    const stats = await handle.stat()
    if (!stats.isFile()) {
      await handle.close()
      return null
    }
    return { stream: handle.createReadStream({ start: range?.start, end: range?.end }), size: stats.size }
  }

  async delete(key: string): Promise<void> {
    try {
      await fsp.unlink(await this.file(key))
    } catch (error) {
      if (!isMissing(error)) throw error
    }
  }

  async move(from: string, to: string): Promise<void> {
    const source = await this.file(from)
    await fsp.rename(source, await this.file(to, true))
  }
}
