/**
 * startSmtpServer(): a real SMTP server (smtp-server) on a loopback port, keeping every mail it
 * receives parsed (mailparser); closed when the test file ends. Also a server that accepts
 * connections and never answers, for timeouts.
 */
import net from 'node:net'
import { after } from 'node:test'
import { simpleParser, type ParsedMail } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  from: string
  to: string[]
  subject: string
  text: string
  html: string
  raw: string
  parsed: ParsedMail
}

export interface TestSmtpServer {
  /** smtp://127.0.0.1:<port> */
  url: string
  received: ReceivedMail[]
  /** the next mail to `to` not yet taken by next(), waiting up to timeoutMs */
  next(to: string, timeoutMs?: number): Promise<ReceivedMail>
  /** mails to `to` so far (taken or not) */
  to(to: string): ReceivedMail[]
  /** refuse every mail (550) from now on, or accept again */
  refuse(on: boolean): void
  close(): Promise<void>
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = []
  const taken = new Set<ReceivedMail>()
  const waiters: (() => void)[] = []
  let refusing = false
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (refusing) return callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }))
        const raw = Buffer.concat(chunks).toString('utf8')
        simpleParser(raw).then((parsed) => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
            raw,
            parsed,
          })
          for (const wake of waiters.splice(0)) wake()
          callback()
        }, callback)
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as net.AddressInfo).port
  const mailsTo = (to: string) => received.filter((mail) => mail.to.some((address) => address.toLowerCase() === to.toLowerCase()))
  const smtp: TestSmtpServer = {
    url: `smtp://127.0.0.1:${port}`,
    received,
    to: mailsTo,
    async next(to, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const mail = mailsTo(to).find((m) => !taken.has(m))
        if (mail) {
          taken.add(mail)
          return mail
        }
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`no mail to ${to} within ${timeoutMs} ms`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left)
          waiters.push(() => {
            clearTimeout(timer)
            resolve()
          })
        })
      }
    },
    refuse(on) {
      refusing = on
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
  after(() => smtp.close())
  return smtp
}

/** A TCP server that accepts connections and never says a word (an SMTP server that hangs). */
export async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  const close = () => {
    for (const socket of sockets) socket.destroy()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  }
  after(close)
  return { url: `smtp://127.0.0.1:${port}`, close }
}

/** A loopback port with nothing listening (connections are refused). */
export async function closedPortUrl(): Promise<string> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `smtp://127.0.0.1:${port}`
}
