/**
 * `npm test`: runs every *.test.ts under test/ and src/ with node:test (through tsx).
 * SQLite by default; TEST_DATABASE_URL / TEST_REDIS_URL switch to PostgreSQL / Redis, and an
 * unreachable one fails the run at once instead of silently testing less. Each file runs in its
 * own process with its own servers, databases and Redis prefix; TEST_CONCURRENCY runs that many
 * at once (default 1).
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { Redis } from 'ioredis'
import pg from 'pg'

const root = path.resolve(import.meta.dirname, '..')

function findTests(dir: string): string[] {
  const out: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory() && entry.name !== 'node_modules') out.push(...findTests(full))
    else if (entry.isFile() && entry.name.endsWith('.test.ts')) out.push(full)
  }
  return out
}

async function checkServices() {
  const dbUrl = process.env.TEST_DATABASE_URL
  const redisUrl = process.env.TEST_REDIS_URL
  if (dbUrl) {
    const client = new pg.Client({ connectionString: dbUrl, connectionTimeoutMillis: 5000 })
    try {
      await client.connect()
      await client.query('select 1')
    } catch (error) {
      throw new Error(`TEST_DATABASE_URL is set but PostgreSQL is unreachable (${dbUrl}): ${(error as Error).message}`)
    } finally {
      await client.end().catch(() => {})
    }
  }
  if (redisUrl) {
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 5000 })
    try {
      await redis.connect()
      await redis.ping()
    } catch (error) {
      throw new Error(`TEST_REDIS_URL is set but Redis is unreachable (${redisUrl}): ${(error as Error).message}`)
    } finally {
      redis.disconnect()
    }
  }
  console.log(
    `tern tests: database ${dbUrl ? `PostgreSQL (${dbUrl})` : 'SQLite (temp files)'}; ` +
      `redis ${redisUrl ? redisUrl : 'off — multi-instance tests are skipped (set TEST_REDIS_URL)'}`,
  )
}

async function main() {
  await checkServices()
  const filters = process.argv.slice(2)
  // the browser files are the longest: started first, they do not leave a tail of one file running alone
  const browserFirst = (f: string) => (f.includes(`${path.sep}test${path.sep}web${path.sep}`) ? 0 : 1)
  let files = [...findTests(path.join(root, 'test')), ...findTests(path.join(root, 'src'))].sort(
    (a, b) => browserFirst(a) - browserFirst(b) || a.localeCompare(b),
  )
  if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)))
  if (files.length === 0) throw new Error('no test files matched')
  // One file at a time unless TEST_CONCURRENCY says more. Most of a file's time is spent waiting
  // (servers starting, sockets, timers): on two cores three at once took ~30 % less time, but the
  // load also brought out races in tests (two found and fixed so far), so it is not the default
  // until runs at 3 come out clean repeatedly
  const concurrency = Number(process.env.TEST_CONCURRENCY) || 1
  // --test-force-exit: a file whose tests are done ends even if something of it still runs (a
  // timer loop, a socket of a failed test): once, a failed conformance run's drop loops kept its
  // file alive until CI's time ran out, with every later file waiting behind it
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-force-exit', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
    {
      cwd: root,
      stdio: 'inherit',
    },
  )
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
}

main().catch((error) => {
  console.error(`tern tests: ${(error as Error).message}`)
  process.exit(1)
})
