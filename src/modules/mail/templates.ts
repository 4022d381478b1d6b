/**
 * One template per kind of mail: a subject, a plain-text body and an HTML body. Every value put
 * into the HTML is escaped; `data` is read only by the names a template knows (never indexed by a
 * name that came with a request).
 */
import { escapeHtml } from '../../lib/html.js'

export type MailKind = 'login_code' | 'verify_email' | 'password_reset' | 'account_code' | 'test'

export interface RenderedMail {
  subject: string
  text: string
  html: string
}

type Data = Readonly<Record<string, string>> | undefined

/** data[name] when data has it as its own string, else the fallback. */
function field(data: Data, name: string, fallback = ''): string {
  if (!data || !Object.hasOwn(data, name)) return fallback
  const value = (data as Record<string, unknown>)[name]
  return typeof value === 'string' ? value : fallback
}

const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
  `<body style="font-family: sans-serif; line-height: 1.5">${body}</body></html>`

const TEMPLATES = new Map<MailKind, (data: Data) => RenderedMail>([
  [
    'login_code',
    (data) => {
      const code = field(data, 'code')
      const minutes = field(data, 'minutes', '10')
      return {
        subject: `Your Tern sign-in code: ${code}`,
        text: `Your Tern sign-in code is ${code}\n\nIt works once, for ${minutes} minutes. If you did not try to sign in, ignore this mail: nobody can sign in without the code.\n`,
        html: page(
          'Your Tern sign-in code',
          `<p>Your Tern sign-in code is</p><p style="font-size: 2em; letter-spacing: 0.2em"><strong>${escapeHtml(code)}</strong></p>` +
            `<p>It works once, for ${escapeHtml(minutes)} minutes. If you did not try to sign in, ignore this mail: nobody can sign in without the code.</p>`,
        ),
      }
    },
  ],
  [
    'verify_email',
    (data) => {
      const link = field(data, 'link')
      return {
        subject: 'Confirm your email address for Tern',
        text: `Confirm this email address for your Tern account by opening:\n\n${link}\n\nThe link works once, for 24 hours. If you did not ask for it, ignore this mail.\n`,
        html: page(
          'Confirm your email address',
          `<p>Confirm this email address for your Tern account:</p><p><a href="${escapeHtml(link)}">Confirm my email address</a></p>` +
            `<p>Or open this address: ${escapeHtml(link)}</p><p>The link works once, for 24 hours. If you did not ask for it, ignore this mail.</p>`,
        ),
      }
    },
  ],
  [
    'password_reset',
    (data) => {
      const code = field(data, 'code')
      const link = field(data, 'link')
      const minutes = field(data, 'minutes', '15')
      return {
        subject: `Reset your Tern password: ${code}`,
        text:
          `Someone asked to reset the password of the Tern account with this email address. The code is ${code}\n\n` +
          `Or open this link to choose a new password:\n\n${link}\n\nIt works once, for ${minutes} minutes. ` +
          `If you did not ask for it, ignore this mail: your password stays as it is.\n`,
        html: page(
          'Reset your Tern password',
          `<p>Someone asked to reset the password of the Tern account with this email address. The code is</p>` +
            `<p style="font-size: 2em; letter-spacing: 0.2em"><strong>${escapeHtml(code)}</strong></p>` +
            `<p><a href="${escapeHtml(link)}">Choose a new password</a></p><p>Or open this address: ${escapeHtml(link)}</p>` +
            `<p>It works once, for ${escapeHtml(minutes)} minutes. If you did not ask for it, ignore this mail: your password stays as it is.</p>`,
        ),
      }
    },
  ],
  [
    'account_code',
    (data) => {
      const code = field(data, 'code')
      const action = field(data, 'action', 'change your account')
      const minutes = field(data, 'minutes', '15')
      return {
        subject: `Your Tern confirmation code: ${code}`,
        text:
          `Your code to ${action} is ${code}\n\nIt works once, for ${minutes} minutes. If you did not ask for it, someone may be using your account: ` +
          `sign out your other sessions and change how you sign in.\n`,
        html: page(
          'Your Tern confirmation code',
          `<p>Your code to ${escapeHtml(action)} is</p><p style="font-size: 2em; letter-spacing: 0.2em"><strong>${escapeHtml(code)}</strong></p>` +
            `<p>It works once, for ${escapeHtml(minutes)} minutes. If you did not ask for it, someone may be using your account: ` +
            `sign out your other sessions and change how you sign in.</p>`,
        ),
      }
    },
  ],
  [
    'test',
    (data) => {
      const note = field(data, 'note', 'Mail from Tern works.')
      return {
        subject: 'Tern test mail',
        text: `This is a test mail from Tern.\n\n${note}\n`,
        html: page('Tern test mail', `<p>This is a test mail from Tern.</p><p>${escapeHtml(note)}</p>`),
      }
    },
  ],
])

/** The rendered mail of a kind, or undefined for a kind there is no template for. */
export function renderMail(kind: string, data?: Record<string, string>): RenderedMail | undefined {
  const template = TEMPLATES.get(kind as MailKind)
  return template?.(data)
}

export const MAIL_KINDS: readonly MailKind[] = [...TEMPLATES.keys()]
