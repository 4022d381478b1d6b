import type { AppContext } from '../context.js'
import { migrateToLatest } from '../db/migrate.js'
import { AppError } from '../http/errors.js'
import { ensureAdmin } from '../modules/users/index.js'
import { readPassword } from './password.js'
import { UsageError } from './usage-error.js'

export async function adminCreate(ctx: AppContext, [username, given]: string[]): Promise<void> {
  if (!username) throw new UsageError('admin:create needs a username')
  if (given !== undefined) {
    process.stderr.write('warning: a password on the command line shows in ps and the shell history; leave it out to be asked for it\n')
  }
  const password = given ?? (await readPassword(`password for ${username}: `))
  if (!/^[A-Za-z0-9_]{3,32}$/.test(username)) {
    throw new UsageError('Username must be 3 to 32 characters: letters, digits and underscores')
  }
  if (password.length < 8) throw new UsageError('Password must be at least 8 characters')
  await migrateToLatest(ctx.db)
  try {
    const user = await ensureAdmin(ctx, username, password)
    process.stdout.write(`admin ${user.username} (id ${user.id}) is ready\n`)
  } catch (error) {
    if (error instanceof AppError) throw new Error(error.message)
    throw error
  }
}
