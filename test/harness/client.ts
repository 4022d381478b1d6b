/** A small fetch wrapper: JSON in, `{status, headers, body}` out, optionally as a bearer user. */

export interface Response<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>
  headers?: Record<string, string>
  /** sent as-is (no JSON encoding) */
  raw?: string | Buffer
  redirect?: 'manual' | 'follow'
}

export class Client {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null = null,
  ) {}

  as(token: string | null): Client {
    return new Client(this.baseUrl, token)
  }

  get<T = any>(path: string, options: RequestOptions = {}) {
    return this.request<T>('GET', path, undefined, options)
  }
  post<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('POST', path, body, options)
  }
  delete<T = any>(path: string, options: RequestOptions = {}) {
    return this.request<T>('DELETE', path, undefined, options)
  }

  async request<T = any>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<Response<T>> {
    const url = new URL(path, this.baseUrl)
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value))
    }
    const headers: Record<string, string> = { ...options.headers }
    if (this.token && !('authorization' in headers)) headers.authorization = `Bearer ${this.token}`
    let payload: string | Buffer | undefined
    if (options.raw !== undefined) payload = options.raw
    else if (body !== undefined) {
      payload = JSON.stringify(body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await fetch(url, { method, headers, body: payload as BodyInit | undefined, redirect: options.redirect ?? 'manual' })
    const text = await res.text()
    let parsed: any = text
    if ((res.headers.get('content-type') ?? '').includes('application/json') && text) {
      parsed = JSON.parse(text)
    }
    return { status: res.status, headers: res.headers, body: parsed, text }
  }
}
