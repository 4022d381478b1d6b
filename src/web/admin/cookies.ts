/** The panel's two cookies: its session and its CSRF secret. */
import type { AppContext } from '../../context.js'
import { PANEL } from './layout.js'

export const ADMIN_COOKIE = 'tern_admin'
export const CSRF_COOKIE = 'tern_admin_csrf'

/** Script-proof, sent only to /admin and only from the panel's own pages; Secure behind https. */
export const panelCookie = (ctx: AppContext) => ({
  path: PANEL,
  httpOnly: true,
  sameSite: 'strict' as const,
  secure: ctx.config.publicBaseUrl.startsWith('https:'),
})
