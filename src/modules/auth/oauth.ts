/**
 * Signing in with an OpenID Connect provider (OAUTH_PROVIDERS): `POST V2/auth/oauth/<provider>`
 * with an authorization code (exchanged with openid-client, client_secret_basic, PKCE when the
 * client used it) or with an id_token (verified with jose against the issuer's JWKS: signature,
 * iss, aud, exp, an `iat` neither in the future nor older than an hour, and the nonce when one is
 * given). The id_token a code exchange answers is verified the same way (openid-client leaves its
 * signature unchecked, trusting the TLS connection; a token endpoint is not trusted that far).
 *
 * Who it is: an identity (provider, sub) already tied to a user signs that user in. A new identity
 * is tied to an existing account only through a verified email — the provider says
 * email_verified: true AND the Tern account's email is confirmed. Anything less (either side
 * unconfirmed) opens a separate new account, which takes the email only when the provider
 * verified it and no account has it: an identity never takes over an account by an email alone.
 *
 * Discovery documents are cached an hour per provider; keys are fetched by jose's remote JWKS,
 * which fetches again on an unknown `kid` (at most every 5 s); when the key is still unknown, the
 * discovery document is read again (the jwks_uri may have moved) and the check runs once more.
 */
import { createRemoteJWKSet, customFetch as joseFetch, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import * as oidc from 'openid-client'
import type { AppContext } from '../../context.js'
import type { Config, OAuthProvider } from '../../config.js'
import { isUniqueViolation } from '../../db/errors.js'
import type { UserRow } from '../../db/tables.js'
import { AppError, notFound, unauthorized, validationError } from '../../http/errors.js'
import { CONFIGURED, outboundFetcher } from '../../lib/outbound-http.js'
import * as users from '../users/index.js'
import * as repo from './repo.js'
import type { AuthResult, OAuthBody } from './schemas.js'
import { passedFirstStep, type ClientInfo, type TotpRequired } from './service.js'

const DISCOVERY_TTL_MS = 3_600_000
/** a discovery document younger than this is not read again for an unknown key */
const REDISCOVER_AFTER_MS = 60_000
const HTTP_TIMEOUT_SECONDS = 5
const JWKS_COOLDOWN_MS = 5_000
/** asymmetric signatures only: a JWKS never holds the client secret, and `none` is never accepted */
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

interface Discovered {
  config: oidc.Configuration
  issuer: string
  jwks: ReturnType<typeof createRemoteJWKSet>
  at: number
}

/** The configured providers by id (a Map: the id comes from the URL). */
const providerMaps = new WeakMap<Readonly<Config>, Map<string, OAuthProvider>>()
const discoveries = new WeakMap<AppContext, Map<string, Promise<Discovered>>>()

function providerOf(ctx: AppContext, id: string): OAuthProvider {
  let map = providerMaps.get(ctx.config)
  if (!map) providerMaps.set(ctx.config, (map = new Map(ctx.config.oauthProviders.map((p) => [p.id, p]))))
  const provider = typeof id === 'string' ? map.get(id) : undefined
  if (!provider) throw notFound('Unknown identity provider')
  return provider
}

/** the provider is the operator's (OAUTH_*): every request to it goes through the one outgoing client */
const providerFetch = outboundFetcher(CONFIGURED)

const upstream = (why: string) =>
  new AppError(504, 'upstream_timeout', `The identity provider did not answer properly (${why}); try again later`)

async function discover(ctx: AppContext, provider: OAuthProvider, fresh = false): Promise<Discovered> {
  let cache = discoveries.get(ctx)
  if (!cache) discoveries.set(ctx, (cache = new Map()))
  const cached = cache.get(provider.id)
  if (cached && !fresh) {
    const found = await cached.catch(() => null)
    if (found && Date.now() - found.at < DISCOVERY_TTL_MS) return found
  }
  const loading = (async (): Promise<Discovered> => {
    const insecure = new URL(provider.issuer).protocol === 'http:'
    const config = await oidc.discovery(
      new URL(provider.issuer),
      provider.clientId,
      { client_secret: provider.clientSecret },
      oidc.ClientSecretBasic(provider.clientSecret),
      { timeout: HTTP_TIMEOUT_SECONDS, [oidc.customFetch]: providerFetch, ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}) },
    )
    config.timeout = HTTP_TIMEOUT_SECONDS
    config[oidc.customFetch] = providerFetch
    const meta = config.serverMetadata()
    if (!meta.jwks_uri) throw new Error('the discovery document names no jwks_uri')
    const jwks = createRemoteJWKSet(new URL(meta.jwks_uri), {
      timeoutDuration: HTTP_TIMEOUT_SECONDS * 1000,
      cooldownDuration: JWKS_COOLDOWN_MS,
      [joseFetch]: providerFetch,
    })
    return { config, issuer: meta.issuer, jwks, at: Date.now() }
  })()
  cache.set(provider.id, loading)
  try {
    return await loading
  } catch (error) {
    cache.delete(provider.id)
    ctx.log.warn({ provider: provider.id, err: { message: (error as Error).message } }, 'OpenID Connect discovery failed')
    throw upstream('discovery')
  }
}

/** jose's refusals as 401s that say what was wrong; a provider that cannot be reached is a 504. */
function idTokenRefusal(error: unknown): AppError {
  if (error instanceof AppError) return error
  if (error instanceof joseErrors.JWTExpired) return unauthorized('The id_token has expired')
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return unauthorized('The id_token was not issued by this provider')
    if (error.claim === 'aud') return unauthorized('The id_token is not for this client')
    return unauthorized(`The id_token's ${error.claim} claim is not valid`)
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return unauthorized('The id_token signature does not verify')
  if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys) {
    return unauthorized('The id_token is signed with a key the provider does not publish')
  }
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) return upstream('keys')
  if (error instanceof joseErrors.JOSEError) return unauthorized('The id_token is not a valid signed token')
  if (error instanceof TypeError || (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')))
    return upstream('keys')
  return unauthorized('The id_token is not valid')
}

/** the oldest id_token accepted, by its iat */
const ID_TOKEN_MAX_AGE_SECONDS = 3600

/** Verifies an id_token against the provider's keys; answers its claims. */
async function verifyIdToken(ctx: AppContext, provider: OAuthProvider, idToken: string, nonce: string | undefined): Promise<JWTPayload> {
  let found = await discover(ctx, provider)
  const verify = (d: Discovered) =>
    jwtVerify(idToken, d.jwks, {
      issuer: d.issuer,
      audience: provider.clientId,
      algorithms: ID_TOKEN_ALGORITHMS,
      requiredClaims: ['iss', 'aud', 'exp', 'iat', 'sub'],
      currentDate: new Date(ctx.clock.now()),
      clockTolerance: 30,
      // bounds iat both ways: issued in the last hour, and not in the future (beyond the tolerance)
      maxTokenAge: ID_TOKEN_MAX_AGE_SECONDS,
    })
  let payload: JWTPayload
  try {
    try {
      payload = (await verify(found)).payload
    } catch (error) {
      // keys still unknown after the JWKS was fetched again: the jwks_uri may have moved
      if (!(error instanceof joseErrors.JWKSNoMatchingKey) || Date.now() - found.at < REDISCOVER_AFTER_MS) throw error
      found = await discover(ctx, provider, true)
      payload = (await verify(found)).payload
    }
  } catch (error) {
    throw idTokenRefusal(error)
  }
  // several audiences: the token must name this client as the one it was issued to (OIDC Core 3.1.3.7)
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== provider.clientId)
    throw unauthorized('The id_token is not for this client')
  if (nonce !== undefined && payload.nonce !== nonce) throw unauthorized('The id_token nonce does not match')
  return payload
}

/** Exchanges an authorization code (client_secret_basic); answers the id_token's claims with the userinfo's. */
async function exchangeCode(ctx: AppContext, provider: OAuthProvider, body: OAuthBody): Promise<JWTPayload> {
  const found = await discover(ctx, provider)
  let callback: URL
  try {
    callback = new URL(body.redirect_uri ?? '')
  } catch {
    throw validationError('redirect_uri must be an absolute URL')
  }
  if (
    (callback.protocol !== 'https:' && callback.protocol !== 'http:') ||
    callback.search ||
    callback.hash ||
    callback.username ||
    callback.password
  ) {
    throw validationError('redirect_uri must be an http(s) URL without query, fragment or credentials')
  }
  callback.searchParams.set('code', body.code ?? '')
  // RFC 9207: the provider names itself in the response; the code came for this provider
  if (found.config.serverMetadata().authorization_response_iss_parameter_supported) callback.searchParams.set('iss', found.issuer)
  try {
    const tokens = await oidc.authorizationCodeGrant(found.config, callback, {
      pkceCodeVerifier: body.code_verifier,
      expectedNonce: body.nonce,
      idTokenExpected: true,
    })
    if (!tokens.id_token || !tokens.claims()) throw unauthorized('The provider answered no id_token')
    // its signature, issuer, audience and times, against the provider's published keys
    const claims = await verifyIdToken(ctx, provider, tokens.id_token, body.nonce)
    let info: Record<string, unknown> = {}
    if (tokens.access_token && found.config.serverMetadata().userinfo_endpoint) {
      info = await oidc.fetchUserInfo(found.config, tokens.access_token, claims.sub!)
    }
    // the id_token's claims win; the userinfo fills in what it left out (email, names)
    return { ...info, ...claims } as JWTPayload
  } catch (error) {
    if (error instanceof AppError) throw error
    if (error instanceof oidc.ResponseBodyError) {
      throw unauthorized(
        error.error === 'invalid_grant'
          ? 'The code is unknown, used or expired at the provider'
          : `The provider refused the code (${error.error})`,
      )
    }
    if (
      error instanceof oidc.ClientError ||
      error instanceof oidc.AuthorizationResponseError ||
      error instanceof oidc.WWWAuthenticateChallengeError
    ) {
      throw unauthorized(`The provider's answer did not verify: ${String((error as Error).message).slice(0, 200)}`)
    }
    throw upstream('token endpoint')
  }
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/

/** A username from the claims: [A-Za-z0-9_], 3 to 24 characters; `user` when nothing fits. */
export function usernameBase(claims: Record<string, unknown>): string {
  const candidates = [
    claims.preferred_username,
    typeof claims.email === 'string' ? claims.email.split('@')[0] : undefined,
    claims.nickname,
    claims.name,
  ]
  for (const candidate of candidates) {
    if (typeof candidate !== 'string') continue
    const cleaned = candidate
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .replace(/[^A-Za-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 24)
      .replace(/_+$/, '')
    if (cleaned.length >= 3) return cleaned
  }
  return 'user'
}

async function freeUsername(ctx: AppContext, base: string): Promise<string> {
  if (await users.isUsernameFree(ctx.db, base)) return base
  for (let n = 2; n <= 9; n++) if (await users.isUsernameFree(ctx.db, `${base}_${n}`)) return `${base}_${n}`
  for (;;) {
    const name = `${base}_${Math.random().toString(36).slice(2, 8)}`
    if (await users.isUsernameFree(ctx.db, name)) return name
  }
}

/** The user an identity signs in as: tied already, linked by a verified email, or a new account. */
async function userFor(ctx: AppContext, provider: OAuthProvider, claims: JWTPayload): Promise<UserRow> {
  const subject = claims.sub
  if (typeof subject !== 'string' || subject === '' || subject.length > 255) throw unauthorized('The provider gave no valid subject')
  const now = ctx.clock.now()
  const email =
    typeof claims.email === 'string' && EMAIL.test(claims.email) && claims.email.length <= 254 ? claims.email.toLowerCase() : null
  const providerVerified = claims.email_verified === true || claims.email_verified === 'true'
  for (let attempt = 0; attempt < 3; attempt++) {
    const identity = await repo.findIdentity(ctx.db, provider.id, subject)
    if (identity) {
      await repo.touchIdentity(ctx.db, identity.id, now)
      const user = await users.findById(ctx, identity.user_id)
      if (!user || user.deleted_at !== null) throw unauthorized('This account is suspended')
      return user
    }
    let holder: UserRow | undefined
    if (email && providerVerified) {
      const found = await users.findByLogin(ctx, email)
      if (found && found.email?.toLowerCase() === email && found.email_verified === 1) holder = found
    }
    const username = holder ? holder.username : await freeUsername(ctx, usernameBase(claims))
    const keepEmail = !holder && email !== null && providerVerified && !(await users.isEmailTaken(ctx.db, email))
    const displayName = typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim().slice(0, 64) : username
    try {
      return await ctx.db.transaction().execute(async (trx) => {
        const user =
          holder ??
          (await users.insertExternalAccount(trx, {
            username,
            email: keepEmail ? email : null,
            emailVerified: keepEmail,
            displayName,
            now,
          }))
        await repo.insertIdentity(trx, { provider: provider.id, subject, user_id: user.id, email, created_at: now })
        return user
      })
    } catch (error) {
      // another first sign-in of the same identity (or the same new username) won: look again
      if (isUniqueViolation(error) || (error instanceof AppError && error.code === 'conflict')) continue
      throw error
    }
  }
  throw new AppError(409, 'conflict', 'Signing in collided with another sign-in; try again')
}

/** `POST auth/oauth/<provider>`: a session (method `oauth:<provider>`), or with two-factor on a ticket. */
export async function signIn(ctx: AppContext, providerId: string, body: OAuthBody, client: ClientInfo): Promise<AuthResult | TotpRequired> {
  const provider = providerOf(ctx, providerId)
  const byCode = body.code !== undefined
  if (byCode === (body.id_token !== undefined)) throw validationError('Send either {code, redirect_uri} or {id_token}')
  if (byCode && body.redirect_uri === undefined) throw validationError('redirect_uri is required with code')
  const claims = byCode ? await exchangeCode(ctx, provider, body) : await verifyIdToken(ctx, provider, body.id_token!, body.nonce)
  const user = await userFor(ctx, provider, claims)
  return passedFirstStep(ctx, user, `oauth:${provider.id}`, body.device ?? null, client)
}
