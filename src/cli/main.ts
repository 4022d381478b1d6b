/** `npm run cli -- <command> [args]`: operator commands against the configured database. */
import { ConfigError, loadConfig } from '../config.js'
import { createContext, createLogger, type AppContext } from '../context.js'
import { adminCreate } from './admin-create.js'
import { migrate } from './migrate.js'
import { UsageError } from './usage-error.js'
import { userList } from './user-list.js'

interface Command {
  usage: string
  summary: string
  run(ctx: AppContext, args: string[]): Promise<void>
}

const commands: Record<string, Command> = {
  migrate: { usage: 'migrate', summary: 'apply pending database migrations', run: migrate },
  'admin:create': {
    usage: 'admin:create <username> <password>',
    summary: 'create an admin account, or make an existing user admin with this password',
    run: adminCreate,
  },
  'user:list': { usage: 'user:list [search]', summary: 'list users (newest first, 100 at most)', run: userList },
}

function help(): string {
  const lines = Object.values(commands).map((c) => `  ${c.usage.padEnd(36)} ${c.summary}`)
  return `usage: npm run cli -- <command>\n\ncommands:\n${lines.join('\n')}\n`
}

async function main() {
  const [name, ...args] = process.argv.slice(2)
  const command = name ? commands[name] : undefined
  if (!command) {
    process.stderr.write(name && name !== 'help' ? `unknown command: ${name}\n\n${help()}` : help())
    process.exit(name && name !== 'help' ? 2 : 0)
  }
  let config
  try {
    config = loadConfig()
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    for (const problem of error.problems) process.stderr.write(`tern: invalid configuration: ${problem}\n`)
    process.exit(1)
  }
  const ctx = createContext(config, { log: createLogger({ logLevel: 'warn' }) })
  try {
    await command.run(ctx, args)
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\nusage: npm run cli -- ${command.usage}\n`)
      process.exitCode = 2
    } else {
      process.stderr.write(`tern: ${command.usage.split(' ')[0]} failed: ${error instanceof Error ? error.message : String(error)}\n`)
      process.exitCode = 1
    }
  } finally {
    await ctx.close()
  }
}

await main()
