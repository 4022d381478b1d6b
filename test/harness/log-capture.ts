/** A pino logger (with the server's redaction) whose lines are kept in memory, for tests that read the log. */
import { Writable } from 'node:stream'
import pino, { type Logger } from 'pino'
import { LOG_REDACTION } from '../../src/context.js'

export interface CapturedLog {
  logger: Logger
  /** every line written so far, as written */
  text(): string
  /** the lines parsed as JSON */
  entries(): Record<string, any>[]
}

export function captureLog(level: pino.Level = 'trace'): CapturedLog {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  // a synchronous stream: every line is there once the call that logged it returns
  const logger = pino({ level, redact: LOG_REDACTION }, pino.multistream([{ stream: sink, level }]))
  return {
    logger,
    text: () => lines.join(''),
    entries: () =>
      lines
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
  }
}
