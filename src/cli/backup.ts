/**
 * `npm run cli -- backup <file>` and `restore <file>` for the embedded SQLite database.
 *
 * backup uses SQLite's online backup API through its own connection: safe while the server runs
 * (WAL: the server keeps writing; a copy interrupted by a write starts over on its next step, and
 * the copy is taken in one step after the first, so it finishes). It writes `<file>.partial` and
 * renames it into place, so a backup file is always whole. PostgreSQL has pg_dump for this.
 *
 * restore needs the server stopped. It checks the file is a Tern database, keeps the current
 * database as `<db>.before-restore-<time>`, and puts the backup in its place (the old WAL and
 * shared-memory files go with the old database). Message search's index, a file of its own derived
 * from the messages, is not copied: restore removes it and the server builds it again.
 */
import fs from 'node:fs'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { sqlitePath, type Config } from '../config.js'
import type { AppContext } from '../context.js'
import { searchFileFor } from '../modules/search/index.js'
import { UsageError } from './usage-error.js'

const PG_ADVICE = 'On PostgreSQL use pg_dump / pg_restore (see docs/operations.md, Backups)'

function target(args: string[], verb: string): { file: string; force: boolean } {
  const force = args.includes('--force')
  const rest = args.filter((arg) => arg !== '--force')
  if (rest.length !== 1) throw new UsageError(`${verb} needs one file`)
  return { file: path.resolve(rest[0]), force }
}

/** Whether `file` is a readable SQLite database with Tern's migrations table; else why not. */
function checkTernDatabase(file: string): string | null {
  let db: SQLite.Database | null = null
  try {
    db = new SQLite(file, { readonly: true, fileMustExist: true })
    const check = db.pragma('quick_check', { simple: true })
    if (check !== 'ok') return `it fails SQLite's quick_check: ${String(check)}`
    const table = db.prepare("select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'").get()
    if (!table) return 'it is not a Tern database (no kysely_migration table)'
    return null
  } catch (error) {
    return `it cannot be read as SQLite: ${error instanceof Error ? error.message : String(error)}`
  } finally {
    db?.close()
  }
}

export async function backup(ctx: AppContext, args: string[]): Promise<void> {
  const { file, force } = target(args, 'backup')
  if (!ctx.sqlite) throw new Error(`backup copies the embedded SQLite database. ${PG_ADVICE}`)
  if (fs.existsSync(file) && !force) throw new UsageError(`${file} exists; add --force to replace it`)
  if (!fs.existsSync(path.dirname(file))) throw new UsageError(`the directory ${path.dirname(file)} does not exist`)
  const partial = `${file}.partial`
  fs.rmSync(partial, { force: true })
  const started = Date.now()
  try {
    // after the first step, the rest in one step: a write in between restarts it, and it then completes
    const progress = await ctx.sqlite.backup(partial, { progress: () => 0x7fffffff })
    const problem = checkTernDatabase(partial)
    if (problem) throw new Error(`the copy is not usable: ${problem}`)
    fs.renameSync(partial, file)
    const bytes = fs.statSync(file).size
    process.stdout.write(`backed up ${progress.totalPages} pages (${bytes} bytes) to ${file} in ${Date.now() - started} ms\n`)
  } catch (error) {
    fs.rmSync(partial, { force: true })
    throw error
  }
}

export async function restore(config: Readonly<Config>, args: string[]): Promise<void> {
  const { file } = target(args, 'restore')
  if (config.dialect !== 'sqlite') throw new Error(`restore replaces the embedded SQLite database. ${PG_ADVICE}`)
  if (!fs.existsSync(file)) throw new UsageError(`${file} does not exist`)
  const problem = checkTernDatabase(file)
  if (problem) throw new Error(`${file} cannot be restored: ${problem}`)
  const live = sqlitePath(config.databaseUrl)
  fs.mkdirSync(path.dirname(live), { recursive: true })
  const incoming = `${live}.restoring`
  fs.copyFileSync(file, incoming)
  let kept: string | null = null
  if (fs.existsSync(live)) {
    kept = `${live}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`
    fs.renameSync(live, kept)
    for (const suffix of ['-wal', '-shm']) {
      if (fs.existsSync(live + suffix)) fs.renameSync(live + suffix, kept + suffix)
    }
  }
  fs.renameSync(incoming, live)
  // message search's index (a file of its own, derived from the messages) describes the database
  // that was replaced: the server builds it again from the restored messages after start
  const index = searchFileFor(live)
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(index + suffix, { force: true })
  process.stdout.write(
    `restored ${file} into ${live}${kept ? `; the database it replaced is kept as ${kept}` : ''}\n` +
      'Start the server: pending migrations, if the backup is older, are applied at start, and message search is indexed again in the background.\n',
  )
}
