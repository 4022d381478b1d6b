/**
 * A browser-like client of the admin panel (/admin) over plain HTTP: a cookie jar that honours
 * Path=/admin, HTML form posts (application/x-www-form-urlencoded) and the CSRF token read from
 * the last page, so tests can post forms with the right token, a wrong one or none.
 */
import assert from 'node:assert/strict'

export interface PanelAnswer {
  status: number
  headers: Headers
  text: string
  location: string | null
}

export class PanelClient {
  /** name → value of the cookies the server set (all the panel's are Path=/admin) */
  readonly cookies = new Map<string, string>()
  /** every Set-Cookie line received, newest last */
  readonly setCookies: string[] = []
  /** the `_csrf` value of the last HTML page that carried one */
  csrf: string | null = null

  constructor(readonly baseUrl: string) {}

  private cookieHeader(): string | undefined {
    return this.cookies.size ? [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') : undefined
  }

  async request(
    method: string,
    path: string,
    init: { body?: string; contentType?: string; headers?: Record<string, string> } = {},
  ): Promise<PanelAnswer> {
    const headers: Record<string, string> = { ...init.headers }
    const cookie = this.cookieHeader()
    if (cookie && !('cookie' in headers)) headers.cookie = cookie
    if (init.contentType) headers['content-type'] = init.contentType
    const res = await fetch(new URL(path, this.baseUrl), { method, headers, body: init.body, redirect: 'manual' })
    for (const line of res.headers.getSetCookie()) {
      this.setCookies.push(line)
      const [pair, ...attributes] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq).trim()
      const value = pair.slice(eq + 1).trim()
      const expired = attributes.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a) || /^\s*max-age=0\s*$/i.test(a))
      if (expired || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    const text = await res.text()
    const token = /name="_csrf" value="([^"]+)"/.exec(text)
    if (token) this.csrf = token[1]
    return { status: res.status, headers: res.headers, text, location: res.headers.get('location') }
  }

  get(path: string, headers: Record<string, string> = {}) {
    return this.request('GET', path, { headers })
  }

  /**
   * Posts a form. `csrf`: 'page' (default) sends the token of the last page, 'none' sends none, a
   * string sends that string.
   */
  post(
    path: string,
    fields: Record<string, string> = {},
    options: { csrf?: 'page' | 'none' | string; headers?: Record<string, string> } = {},
  ) {
    const form = new URLSearchParams(fields)
    const csrf = options.csrf ?? 'page'
    if (csrf === 'page') {
      assert.ok(this.csrf, 'a page with a form was fetched first')
      form.set('_csrf', this.csrf)
    } else if (csrf !== 'none') form.set('_csrf', csrf)
    return this.request('POST', path, { body: form.toString(), contentType: 'application/x-www-form-urlencoded', headers: options.headers })
  }

  /** Signs in through the login form; asserts the redirect to the overview. */
  async login(login: string, password: string): Promise<PanelAnswer> {
    const page = await this.get('/admin/login')
    assert.equal(page.status, 200, page.text)
    const res = await this.post('/admin/login', { login, password })
    assert.equal(res.status, 303, `login as ${login}: ${res.status} ${res.text}`)
    assert.equal(res.location, '/admin')
    assert.ok(this.cookies.has('tern_admin'), 'the panel cookie is set')
    return res
  }
}

/** Attributes of a Set-Cookie line: lower-cased names → values ('' for flags). */
export function cookieAttributes(line: string): Map<string, string> {
  const [, ...parts] = line.split(';')
  return new Map(
    parts.map((part) => {
      const [name, ...value] = part.trim().split('=')
      return [name.toLowerCase(), value.join('=')] as [string, string]
    }),
  )
}
