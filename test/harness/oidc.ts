/**
 * A real OpenID Connect provider (the `oidc-provider` package) on loopback, for the oauth tests:
 * two confidential clients (client_secret_basic), accounts the test defines, and an interaction
 * that signs in the account named by `login_hint` at once (no login page), so a test gets a real
 * authorization code by following redirects. The signing key is the test's own, so it can also
 * mint tokens with chosen claims that verify against the provider's real JWKS.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after } from 'node:test'
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import Provider from 'oidc-provider'

export interface OidcAccount {
  sub: string
  email?: string
  email_verified?: boolean
  preferred_username?: string
  name?: string
}

export const REDIRECT_URI = 'http://127.0.0.1:9/callback'

export interface TestOidcProvider {
  issuer: string
  clients: { tern: { id: string; secret: string }; other: { id: string; secret: string } }
  addAccount(account: OidcAccount): void
  /** drives /auth for the account: the authorization code */
  code(options: { account: string; clientId?: string; nonce?: string; codeChallenge?: string }): Promise<string>
  /** exchanges a code at the token endpoint as a client would: the token response */
  exchange(code: string, options?: { clientId?: string; verifier?: string }): Promise<{ id_token: string; access_token: string }>
  /** a token signed with the provider's current key (or `key`), with these claims */
  sign(claims: Record<string, unknown>, options?: { key?: CryptoKey; kid?: string }): Promise<string>
  /**
   * The next token response's id_token is replaced by `rewrite`'s (what a man in the middle, or a
   * compromised token endpoint, would answer): the claims it carried are handed over.
   */
  rewriteNextIdToken(rewrite: (claims: Record<string, unknown>) => Promise<string>): void
  /** requests for the JWKS so far */
  jwksFetches(): number
  /** replaces the signing key with a new one (new kid): the JWKS changes */
  rotateKeys(): Promise<void>
  close(): Promise<void>
}

async function newKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' }
  return { privateKey, publicKey, jwk, kid }
}

export async function startOidcProvider(): Promise<TestOidcProvider> {
  const accounts = new Map<string, OidcAccount>()
  const clients = {
    tern: { id: 'tern', secret: 'tern-client-secret-0123456789abcdef' },
    other: { id: 'other-app', secret: 'other-client-secret-0123456789abcd' },
  }
  let key = await newKey('key-1')
  let jwksFetches = 0
  let provider: Provider | null = null
  let rewriteIdToken: ((claims: Record<string, unknown>) => Promise<string>) | null = null
  const server = http.createServer((req, res) => {
    if (!provider) return res.end()
    if (req.url?.startsWith('/jwks')) jwksFetches++
    if (rewriteIdToken && req.url?.startsWith('/token')) {
      const rewrite = rewriteIdToken
      rewriteIdToken = null
      const chunks: Buffer[] = []
      const end = res.end.bind(res) as (body: string) => void
      res.write = ((chunk: Buffer | string) => {
        chunks.push(Buffer.from(chunk))
        return true
      }) as typeof res.write
      res.end = ((chunk?: Buffer | string) => {
        if (chunk) chunks.push(Buffer.from(chunk))
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        const claims = JSON.parse(Buffer.from(String(body.id_token).split('.')[1], 'base64url').toString('utf8'))
        void rewrite(claims).then((idToken) => {
          const text = JSON.stringify({ ...body, id_token: idToken })
          res.setHeader('content-length', Buffer.byteLength(text))
          end(text)
        })
        return res
      }) as typeof res.end
    }
    if (req.url?.startsWith('/interaction/')) {
      void interact(provider, req, res).catch((error) => {
        res.statusCode = 500
        res.end(String(error))
      })
      return
    }
    provider.callback()(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const build = () =>
    new Provider(issuer, {
      clients: Object.values(clients).map((c) => ({
        client_id: c.id,
        client_secret: c.secret,
        redirect_uris: [REDIRECT_URI],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      })),
      jwks: { keys: [key.jwk] },
      // the id_token carries the scope's claims too (the id_token path reads the email from it)
      conformIdTokenClaims: false,
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username', 'name'] },
      findAccount: async (_ctx: unknown, sub: string) => {
        const account = accounts.get(sub)
        return account ? { accountId: sub, claims: async () => ({ ...account }) } : undefined
      },
      features: { devInteractions: { enabled: false } },
    })

  async function interact(p: Provider, req: http.IncomingMessage, res: http.ServerResponse) {
    const details = await p.interactionDetails(req, res)
    const accountId = String(details.params.login_hint ?? '')
    const grant = new p.Grant({ accountId, clientId: String(details.params.client_id) })
    grant.addOIDCScope(String(details.params.scope))
    const grantId = await grant.save()
    await p.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false })
  }

  provider = build()
  const basic = (clientId: string) => {
    const c = Object.values(clients).find((x) => x.id === clientId)!
    return `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret)}`).toString('base64')}`
  }

  const api: TestOidcProvider = {
    issuer,
    clients,
    addAccount: (account) => void accounts.set(account.sub, account),
    async code({ account, clientId = clients.tern.id, nonce, codeChallenge }) {
      const url = new URL('/auth', issuer)
      url.search = new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'openid email profile',
        login_hint: account,
        ...(nonce ? { nonce } : {}),
        ...(codeChallenge ? { code_challenge: codeChallenge, code_challenge_method: 'S256' } : {}),
      }).toString()
      const jar = new Map<string, string>()
      let next = url.href
      for (let hop = 0; hop < 10; hop++) {
        const res = await fetch(next, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } })
        for (const cookie of res.headers.getSetCookie()) {
          const [pair] = cookie.split(';')
          const eq = pair.indexOf('=')
          jar.set(pair.slice(0, eq), pair.slice(eq + 1))
        }
        const location = res.headers.get('location')
        if (!location) throw new Error(`the provider stopped at ${next}: ${res.status} ${await res.text()}`)
        const target = new URL(location, next)
        if (target.href.startsWith(REDIRECT_URI)) {
          const code = target.searchParams.get('code')
          if (!code) throw new Error(`no code: ${target.href}`)
          return code
        }
        next = target.href
      }
      throw new Error('too many redirects')
    },
    async exchange(code, { clientId = clients.tern.id, verifier } = {}) {
      const res = await fetch(new URL('/token', issuer), {
        method: 'POST',
        headers: { authorization: basic(clientId), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT_URI,
          ...(verifier ? { code_verifier: verifier } : {}),
        }),
      })
      const body = await res.json()
      if (res.status !== 200) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(body)}`)
      return body
    },
    async sign(claims, options = {}) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? key.kid, typ: 'JWT' })
        .sign(options.key ?? key.privateKey)
    },
    rewriteNextIdToken(rewrite) {
      rewriteIdToken = rewrite
    },
    jwksFetches: () => jwksFetches,
    async rotateKeys() {
      key = await newKey(`key-${Date.now()}`)
      provider = build()
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  after(() => api.close())
  return api
}
