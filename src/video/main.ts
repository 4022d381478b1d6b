/** `npm run start:video`: the video signaling service on its own (no database). */
import { ConfigError, loadConfig, type Config } from '../config.js'
import { createLogger } from '../context.js'
import { startVideoService } from './server.js'

async function main() {
  // what it creates (backups, the log file) is the server user's alone
  process.umask(0o077)
  let config: Config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) process.stderr.write(`tern-video: invalid configuration: ${problem}\n`)
      process.exit(1)
    }
    throw error
  }
  const log = createLogger(config)
  const service = await startVideoService(config, { log })
  log.info({ port: service.port, redis: Boolean(config.redisUrl) }, 'Tern video service is ready')
  let closing = false
  const shutdown = async () => {
    if (closing) return
    closing = true
    setTimeout(() => process.exit(1), 10_000).unref()
    await service.close().catch(() => undefined)
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown())
  process.on('SIGINT', () => void shutdown())
}

main().catch((error) => {
  process.stderr.write(`tern-video: failed to start: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
