/** Process entry: config → context → migrate → app.listen; graceful shutdown on SIGTERM/SIGINT. */
import { ConfigError, loadConfig, type Config } from './config.js'
import { buildApp } from './app.js'
import { createContext, createLogger } from './context.js'
import { migrateToLatest } from './db/migrate.js'
import { ensureAdmin } from './modules/users/index.js'
import { startVideoService, type VideoService } from './video/server.js'

function readConfig(): Readonly<Config> {
  try {
    return loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) process.stderr.write(`tern: invalid configuration: ${problem}\n`)
      process.exit(1)
    }
    throw error
  }
}

async function main() {
  // what the server creates (the database, its WAL, the log file, keys, uploads) is its user's alone
  process.umask(0o077)
  let config = readConfig()
  // The video signaling service runs in this process on VIDEO_PORT unless VIDEO_URL names one elsewhere.
  let video: VideoService | null = null
  if (!config.videoUrl) {
    video = await startVideoService(config, { log: createLogger(config) })
    config = Object.freeze({ ...config, videoUrl: video.url })
  }
  const ctx = createContext(config)
  // No socket before this instance hears what the others publish.
  await ctx.fanout.ready
  const applied = await migrateToLatest(ctx.db)
  if (applied.length) ctx.log.info({ migrations: applied }, 'database migrated')
  if (config.adminUsername && config.adminPassword) {
    await ensureAdmin(ctx, config.adminUsername, config.adminPassword)
    ctx.log.info({ username: config.adminUsername }, 'admin account ensured')
  }

  const app = await buildApp(ctx)
  await app.listen({ port: config.port, host: config.host })
  ctx.log.info({ dialect: config.dialect, redis: Boolean(config.redisUrl) }, 'Tern is ready')
  if (!config.smtpUrl) {
    ctx.log.warn('SMTP_URL is not set: mails (sign-in codes, confirmation links) are written to this log; set it in production')
  }
  if (config.paymentProvider === 'test') {
    ctx.log.warn('PAYMENT_PROVIDER=test: every premium order is paid at once without taking any money; never use it in production')
  } else if (config.paymentProvider === null) {
    ctx.log.warn('PAYMENT_PROVIDER is not set: premium cannot be bought (503 payments_unavailable); set manual, or a provider')
  }

  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    ctx.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests')
    const force = setTimeout(() => {
      ctx.log.error('shutdown took over 10 s; exiting')
      process.exit(1)
    }, 10_000)
    force.unref()
    try {
      await app.close()
      await video?.close()
      await ctx.close()
      process.exit(0)
    } catch (err) {
      ctx.log.error({ err }, 'error during shutdown')
      process.exit(1)
    }
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

main().catch((error) => {
  process.stderr.write(`tern: failed to start: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
