/**
 * Outgoing mail: nodemailer over SMTP_URL, from MAIL_FROM. Without SMTP_URL each mail is written
 * to the log instead (info level), so a developer can sign in locally with the code it carries;
 * a production server sets SMTP_URL.
 *
 * A send never holds a request for long: connecting, the greeting and every reply each get
 * MAIL_TIMEOUT_SECONDS, and the whole send twice that; a server that refuses, fails or is too slow
 * gives 503 mail_unavailable to the step that needed the mail.
 */
import nodemailer, { type Transporter } from 'nodemailer'
import type { Config } from '../../config.js'
import type { AppContext } from '../../context.js'
import { mailUnavailable, validationError } from '../../http/errors.js'
import { renderMail, type MailKind } from './templates.js'

export type { MailKind } from './templates.js'

export interface MailMessage {
  to: string
  kind: MailKind
  data?: Record<string, string>
}

/** One transport per configuration (a test server has its own), made on first use. */
const transports = new WeakMap<Readonly<Config>, Transporter>()

function transportFor(config: Readonly<Config>, smtpUrl: string): Transporter {
  let transport = transports.get(config)
  if (!transport) {
    const ms = config.mailTimeoutSeconds * 1000
    transport = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: ms, greetingTimeout: ms, socketTimeout: ms })
    transports.set(config, transport)
  }
  return transport
}

/**
 * Sends one mail of a kind (its template fills subject, text and HTML from `data`). Answers the
 * SMTP server's message id (null when the mail went to the log); throws 503 mail_unavailable when
 * the SMTP server cannot take it, and 400 for a kind without a template.
 */
export async function sendMail(
  ctx: AppContext,
  message: { to: string; kind: MailKind; data?: Record<string, string> },
): Promise<{ messageId: string | null }> {
  const rendered = renderMail(message.kind, message.data)
  if (!rendered) throw validationError('Unknown kind of mail')
  if (typeof message.to !== 'string' || message.to.length > 254 || !/^[^\s@<>,;"]+@[^\s@<>,;"]+$/.test(message.to)) {
    throw validationError('The recipient must be one email address')
  }
  const smtpUrl = ctx.config.smtpUrl
  if (!smtpUrl) {
    ctx.log.info(
      { mail: { to: message.to, kind: message.kind, subject: rendered.subject, text: rendered.text } },
      'mail written to the log (SMTP_URL is not set)',
    )
    return { messageId: null }
  }
  const transport = transportFor(ctx.config, smtpUrl)
  const limitMs = ctx.config.mailTimeoutSeconds * 2000
  let timer: NodeJS.Timeout | undefined
  try {
    const info = await Promise.race([
      transport.sendMail({
        from: ctx.config.mailFrom,
        to: message.to,
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error('the SMTP server took too long'), { code: 'ETIMEDOUT' })), limitMs)
      }),
    ])
    return { messageId: typeof info.messageId === 'string' ? info.messageId : null }
  } catch (error) {
    // The error's own text may quote the server's reply to the message; the code and the command are enough.
    const { code, command, responseCode } = error as { code?: string; command?: string; responseCode?: number }
    ctx.log.warn({ mailError: { kind: message.kind, code, command, responseCode } }, 'mail could not be sent')
    throw mailUnavailable()
  } finally {
    clearTimeout(timer)
  }
}
