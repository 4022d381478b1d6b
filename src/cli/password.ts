/**
 * A password for a CLI command, never from its arguments by default (they show in `ps` and the
 * shell's history): typed at a hidden prompt on a terminal, or the first line of standard input
 * when it is piped (`printf '%s\n' "$PW" | npm run cli -- admin:create alice`).
 */
import { createInterface } from 'node:readline'

export async function readPassword(prompt: string): Promise<string> {
  const input = process.stdin
  if (!input.isTTY) {
    const lines = createInterface({ input, crlfDelay: Infinity })
    for await (const line of lines) {
      lines.close()
      return line
    }
    return ''
  }
  process.stderr.write(prompt)
  input.setRawMode(true)
  input.resume()
  input.setEncoding('utf8')
  return new Promise((resolve, reject) => {
    let typed = ''
    const done = (result: string | null) => {
      input.setRawMode(false)
      input.pause()
      input.off('data', onData)
      process.stderr.write('\n')
      if (result === null) reject(new Error('cancelled'))
      else resolve(result)
    }
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return done(typed)
        if (char === '\u0003' || char === '\u0004') return done(null) // Ctrl-C, Ctrl-D
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1)
        else typed += char
      }
    }
    input.on('data', onData)
  })
}
