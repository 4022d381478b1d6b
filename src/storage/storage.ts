/**
 * Where uploaded bytes live. Services name objects by server-generated keys (`area/name`, e.g.
 * `objects/ab/<sha256>`) and never see a file system path, so an object-storage implementation
 * can replace the local directory without touching routes or services.
 */
import type { Readable } from 'node:stream'

/** Bytes to store: a Readable or an async generator (a metering transform over a request part). */
export type Source = AsyncIterable<Uint8Array>

export interface ObjectStat {
  size: number
}

/** An inclusive byte range, as in HTTP `Range: bytes=start-end`. */
export interface ByteRange {
  start: number
  end: number
}

export interface Storage {
  /** Writes `source` to a new temporary object and returns its key; nothing is left when `source` fails. */
  putTemp(source: Source): Promise<string>
  /** Appends `source` to an object (created when missing). Bytes written before a failure stay (resumable uploads). */
  append(key: string, source: Source): Promise<void>
  stat(key: string): Promise<ObjectStat | null>
  /** Opens an object for reading, the whole or a range of it; null when it does not exist. */
  open(key: string, range?: ByteRange): Promise<{ stream: Readable; size: number } | null>
  /** Removes an object; removing a missing one is not an error. */
  delete(key: string): Promise<void>
  /** Puts a (temporary) object in place under another key, replacing what was there, atomically. */
  move(from: string, to: string): Promise<void>
}
