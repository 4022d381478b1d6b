/**
 * Files that several processes on one DATA_DIR may create at the same moment (the server key, the
 * video secret, the VAPID pair): the first one's contents win and every process reads the same.
 * `writeFileSync(file, …, { flag: 'wx' })` is not enough: it creates the file empty and writes
 * after, so a second process could read it in between (two instances starting together saw "does
 * not hold a key"). Here the contents go to a file of this process's own first, and a hard link
 * puts it in place whole, or fails because the file exists.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

/** Creates `file` with `contents` (and `mode`) unless it exists; either way it is whole afterwards. */
export function createFileOnce(file: string, contents: string, mode = 0o600): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const own = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  fs.writeFileSync(own, contents, { flag: 'wx', mode })
  try {
    fs.linkSync(own, file)
  } catch (error) {
    // another process made it first: theirs is the one
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    fs.rmSync(own, { force: true })
  }
}
