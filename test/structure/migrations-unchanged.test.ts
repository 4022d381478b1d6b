/**
 * A landed migration is never edited again (src/db/migrations/README.md): a database migrated
 * with its first text would differ from one migrated with a later text, and nothing would tell
 * them apart. Each migration's current text must be the text of the commit that added it.
 *
 * Read from git history, so the test needs a full clone (CI has one). Without git or the history
 * it fails, unless TEST_NO_GIT=1 says there is none to read.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import test from 'node:test'

const root = path.resolve(import.meta.dirname, '../..')
const dir = 'src/db/migrations'
/** a migration's file name; index.ts (the list), columns.ts (append-only helpers) and README.md are not migrations */
const MIGRATION = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-[a-z0-9-]+\.ts$/

/**
 * Migrations whose current text differs from the text that first landed, accepted as they are
 * now: the sha256 of the accepted text. Any further edit changes the hash and fails. Do not add
 * to this list: write a new migration instead.
 */
export const ACCEPTED_EDITS: Record<string, { sha256: string; why: string }> = {
  '2026-11-21T03-00-chat-activity.ts': {
    sha256: '00a73bbf6fe815eca103db7a5e4493872ed9099414d98c78d6306b48b736c400',
    why: 'a comment\'s reference changed to docs/performance.md (78448ac); no schema change',
  },
  '2026-11-21T04-00-groups-channels.ts': {
    sha256: '8ed1ec8c86e1d7d6984362614478f719b2297382eca5c3049e7870dc69c42049',
    why: 'a comment\'s reference changed to docs/realtime.md (78448ac); no schema change',
  },
  '2026-11-21T05-00-files.ts': {
    sha256: '6b083db4938dc864a90bb9854ee5d88efa20fb3d8bda0342ca550bfa4d89bbf9',
    why: 'messages.preview_size added to it one commit after it was added (4d7e7ee)',
  },
  '2026-11-25T08-00-message-search.ts': {
    sha256: '496ecc22669ecfa7afe83bee28dbd5c2835521f9b0d4fca45c06128a4e85b2b9',
    why: 'the SQLite index made contentless with a chat token, one commit after it was added (e96c309)',
  },
  '2026-11-25T10-00-premium.ts': {
    sha256: 'f9e8bb9b88a620edb3c19cc748746695438509542e23e56a9b59461f9e351f4c',
    why: 'an unused type parameter removed (3149e7b); no schema change',
  },
  '2026-11-25T22-10-bots.ts': {
    sha256: 'dbd2b3e62d34a8f199779ce05b0aa3f4d2d7a8aa71acfe48bf68d5523dec330d',
    why: 'bot_commands.position added (76fdf94)',
  },
  '2026-11-27T20-00-message-search-file.ts': {
    sha256: 'b79d89bd6e6fef1cf81f802749d336c3345001d28c427286778b8058d8fce59b',
    why: 'its down runs 2026-11-25T08-00\'s up instead of a copy of it (7c64d9e); the same schema',
  },
  '2026-12-04T21-00-video-call-peers.ts': {
    sha256: '51326e0553c8d4714735af5d179633b3b89915acfd7c06f1f98f8f89340715c2',
    why: 'video_call_peers.joined_at removed (84c30bd)',
  },
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** What is wrong with a migration's text, or null: pure, so that the rule itself can be tested. */
export function migrationProblem(file: string, first: string, current: string, accepted = ACCEPTED_EDITS): string | null {
  const exception = accepted[file]
  if (current === first) return exception ? `${file} is back to its first text: remove its entry from ACCEPTED_EDITS` : null
  if (!exception) return `${file} differs from the text it landed with: a landed migration is frozen, add a new migration instead`
  if (sha256(current) !== exception.sha256) return `${file} was edited again after its accepted edit (${exception.why}): put it back and add a new migration instead`
  return null
}

const noGit = process.env.TEST_NO_GIT === '1'

function git(...args: string[]): string {
  return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] })
}

/** Fails with a clear message when git or the history cannot be read. */
function requireHistory() {
  try {
    git('rev-parse', '--git-dir')
  } catch (error) {
    assert.fail(`git or the repository's history is unavailable (${(error as Error).message.split('\n')[0]}); run from a git clone, or set TEST_NO_GIT=1 where there is none`)
  }
  assert.equal(git('rev-parse', '--is-shallow-repository').trim(), 'false', 'a shallow clone lacks the commits that added the migrations: fetch the full history (git fetch --unshallow), or set TEST_NO_GIT=1')
}

const skip = noGit && 'TEST_NO_GIT=1: no git history to compare the migrations with'

test('every landed migration is the text of the commit that added it (or an accepted edit)', { skip }, () => {
  requireHistory()
  const files = fs.readdirSync(path.join(root, dir)).filter((name) => MIGRATION.test(name)).sort()
  assert.ok(files.length > 40, `the migrations were read (${files.length})`)
  const problems: string[] = []
  let compared = 0
  for (const name of files) {
    const file = `${dir}/${name}`
    const added = git('log', '--diff-filter=A', '--format=%H', '--', file).trim().split('\n').filter(Boolean).at(-1)
    // not committed yet: a new migration, not a landed one
    if (added === undefined) continue
    const first = git('show', `${added}:${file}`)
    const current = fs.readFileSync(path.join(root, file), 'utf8')
    compared++
    const problem = migrationProblem(name, first, current)
    if (problem) problems.push(problem)
  }
  assert.ok(compared > 40, `the migrations were compared with their history (${compared})`)
  assert.deepEqual(problems, [])
  for (const name of Object.keys(ACCEPTED_EDITS)) assert.ok(files.includes(name), `ACCEPTED_EDITS names ${name}, which is not a migration`)
})

test('the rule catches an edit, a second edit of an accepted one, and a stale exception (positive control)', () => {
  const accepted = { 'b.ts': { sha256: sha256('second'), why: 'test' } }
  assert.equal(migrationProblem('a.ts', 'first', 'first', accepted), null)
  assert.match(migrationProblem('a.ts', 'first', 'first, edited', accepted) ?? '', /a landed migration is frozen/)
  assert.equal(migrationProblem('b.ts', 'first', 'second', accepted), null)
  assert.match(migrationProblem('b.ts', 'first', 'third', accepted) ?? '', /edited again/)
  assert.match(migrationProblem('b.ts', 'first', 'first', accepted) ?? '', /remove its entry/)
})
