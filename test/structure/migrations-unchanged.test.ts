/**
 * A landed migration is never edited again (src/db/migrations/README.md): a database migrated
 * with its first text would differ from one migrated with a later text, and nothing would tell
 * them apart. Each migration's code must be the code of the commit that added it. Its comments
 * may be reworded (they change no database), so the two are compared without comments or blank
 * lines.
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
 * Migrations whose current code differs from the code that first landed, accepted as they are
 * now: the sha256 of the accepted code (codeOf). Any further edit changes the hash and fails. Do not add
 * to this list: write a new migration instead.
 */
export const ACCEPTED_EDITS: Record<string, { sha256: string; why: string }> = {
  '2026-11-21T05-00-files.ts': {
    sha256: '2d13f24729a735851e99e30dbd80081a5760d435bb4450b279a3fe7f14c26258',
    why: 'messages.preview_size added to it one commit after it was added (4d7e7ee)',
  },
  '2026-11-25T08-00-message-search.ts': {
    sha256: '8dcbc4dc3544d3c6a90ce1d490a10607301ced5aac1a24d8559543d639a0c26f',
    why: 'the SQLite index made contentless with a chat token, one commit after it was added (e96c309)',
  },
  '2026-11-25T10-00-premium.ts': {
    sha256: '0125c2d677fd4cb1be5a49e694111a6c8f66fbe8fe8d2e928235677d99128f40',
    why: 'an unused type parameter removed (3149e7b); no schema change',
  },
  '2026-11-25T22-10-bots.ts': {
    sha256: '23a92c10979c67de978e4f2ce59c68b64f4214a55c0c36278663b608e69263a5',
    why: 'bot_commands.position added (76fdf94)',
  },
  '2026-11-27T20-00-message-search-file.ts': {
    sha256: 'b8737b729fc7d88826357cf4b6770710e37a3e1d6880703d9ed0f899433dc35e',
    why: "its down runs 2026-11-25T08-00's up instead of a copy of it (7c64d9e); the same schema",
  },
  '2026-12-04T21-00-video-call-peers.ts': {
    sha256: '5589d313c7e6ca8ab0d2f5a7c0e47b84aaeea3488b70781069c0907884f40870',
    why: 'video_call_peers.joined_at removed (84c30bd)',
  },
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * The code of a TypeScript text: its comments removed (not inside string or template literals),
 * trailing spaces and blank lines dropped.
 */
export function codeOf(text: string): string {
  let out = ''
  let i = 0
  /** open template literals: for each, the depth of `${` braces inside its current substitution */
  const templates: number[] = []
  const inTemplateText = () => templates.length > 0 && templates[templates.length - 1] === 0
  while (i < text.length) {
    const c = text[i]
    const next = text[i + 1]
    if (inTemplateText()) {
      if (c === '\\') {
        out += c + (next ?? '')
        i += 2
      } else if (c === '`') {
        templates.pop()
        out += c
        i++
      } else if (c === '$' && next === '{') {
        templates[templates.length - 1] = 1
        out += '${'
        i += 2
      } else {
        out += c
        i++
      }
      continue
    }
    if (c === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') i++
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2)
      i = end < 0 ? text.length : end + 2
    } else if (c === "'" || c === '"') {
      let j = i + 1
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1
      out += text.slice(i, j + 1)
      i = j + 1
    } else if (c === '`') {
      templates.push(0)
      out += c
      i++
    } else {
      if (templates.length > 0 && c === '{') templates[templates.length - 1]++
      if (templates.length > 0 && c === '}') templates[templates.length - 1]--
      out += c
      i++
    }
  }
  return out
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line !== '')
    .join('\n')
}

/** What is wrong with a migration's text, or null: pure, so that the rule itself can be tested. */
export function migrationProblem(file: string, firstText: string, currentText: string, accepted = ACCEPTED_EDITS): string | null {
  const exception = Object.hasOwn(accepted, file) ? accepted[file] : undefined
  const [first, current] = [codeOf(firstText), codeOf(currentText)]
  if (current === first) return exception ? `${file} is back to its first text: remove its entry from ACCEPTED_EDITS` : null
  if (!exception) return `${file} differs from the text it landed with: a landed migration is frozen, add a new migration instead`
  if (sha256(current) !== exception.sha256)
    return `${file} was edited again after its accepted edit (${exception.why}): put it back and add a new migration instead`
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
    assert.fail(
      `git or the repository's history is unavailable (${(error as Error).message.split('\n')[0]}); run from a git clone, or set TEST_NO_GIT=1 where there is none`,
    )
  }
  assert.equal(
    git('rev-parse', '--is-shallow-repository').trim(),
    'false',
    'a shallow clone lacks the commits that added the migrations: fetch the full history (git fetch --unshallow), or set TEST_NO_GIT=1',
  )
}

const skip = noGit && 'TEST_NO_GIT=1: no git history to compare the migrations with'

test('every landed migration is the text of the commit that added it (or an accepted edit)', { skip }, () => {
  requireHistory()
  const files = fs
    .readdirSync(path.join(root, dir))
    .filter((name) => MIGRATION.test(name))
    .sort()
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
