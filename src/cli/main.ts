/** `npm run cli -- <command> [args]`: operator commands against the configured database. */
import { ConfigError, loadConfig, type Config } from '../config.js'
import { createContext, createLogger, type AppContext } from '../context.js'
import { adminCreate } from './admin-create.js'
import { backup, restore } from './backup.js'
import { jobsList } from './jobs.js'
import { migrate } from './migrate.js'
import { storiesCleanup } from './stories-cleanup.js'
import { UsageError } from './usage-error.js'
import { userList } from './user-list.js'

interface Command {
  usage: string
  summary: string
  run(ctx: AppContext, args: string[]): Promise<void>
  /** a command that must not open the database itself (restore replaces its file) */
  offline?: (config: Readonly<Config>, args: string[]) => Promise<void>
}

const commands = new Map<string, Command>([
  ['migrate', { usage: 'migrate', summary: 'apply pending database migrations', run: migrate }],
  [
    'admin:create',
    {
      usage: 'admin:create <username>',
      summary: 'create an admin account, or make an existing user admin; asks for the password (or reads it from stdin)',
      run: adminCreate,
    },
  ],
  ['user:list', { usage: 'user:list [search]', summary: 'list users (newest first, 100 at most)', run: userList }],
  [
    'stories:cleanup',
    {
      usage: 'stories:cleanup',
      summary:
        'remove expired stories with their views, likes, reactions and media now (the job does it every STORY_CLEANUP_INTERVAL_SECONDS)',
      run: storiesCleanup,
    },
  ],
  ['jobs', { usage: 'jobs', summary: 'list the periodic jobs and what each ran when, on each instance', run: jobsList }],
  [
    'backup',
    {
      usage: 'backup <file> [--force]',
      summary: 'copy the SQLite database to <file> while the server runs (online backup API); PostgreSQL: pg_dump',
      run: backup,
    },
  ],
  [
    'restore',
    {
      usage: 'restore <file>',
      summary: 'put a backup in place of the SQLite database (stop the server first; the old one is kept beside it)',
      run: async () => {},
      offline: restore,
    },
  ],
])

const HELP = new Set(['help', '--help', '-h'])

function help(): string {
  const lines = [...commands.values()].map((c) => `  ${c.usage.padEnd(28)} ${c.summary}`)
  return (
    `usage: npm run cli -- <command> [arguments]\n\ncommands:\n${lines.join('\n')}\n\n` +
    'The CLI reads the same environment variables as the server (DATABASE_URL, DATA_DIR…).\n'
  )
}

async function main() {
  // what it creates (backups, the log file) is the server user's alone
  process.umask(0o077)
  const [name, ...args] = process.argv.slice(2)
  if (name === undefined || HELP.has(name)) {
    process.stdout.write(help())
    return
  }
  const command = commands.get(name)
  if (!command) {
    process.stderr.write(`unknown command: ${name}\n\n${help()}`)
    process.exit(2)
  }
  if (args.some((arg) => HELP.has(arg))) {
    process.stdout.write(`usage: npm run cli -- ${command.usage}\n  ${command.summary}\n`)
    return
  }
  let config: Config
  try {
    config = loadConfig()
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    for (const problem of error.problems) process.stderr.write(`tern: invalid configuration: ${problem}\n`)
    process.exit(1)
  }
  const ctx = command.offline ? null : createContext(config, { log: createLogger({ logLevel: 'warn' }, 2) })
  try {
    if (ctx) await command.run(ctx, args)
    else await command.offline!(config, args)
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\nusage: npm run cli -- ${command.usage}\n`)
      process.exitCode = 2
    } else {
      process.stderr.write(`tern: ${command.usage.split(' ')[0]} failed: ${error instanceof Error ? error.message : String(error)}\n`)
      process.exitCode = 1
    }
  } finally {
    await ctx?.close()
  }
}

await main()
