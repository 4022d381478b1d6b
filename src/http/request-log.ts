/**
 * Request logging: one line per request, written when the response finishes ('request completed',
 * or 'request errored' at error level). Fastify's separate 'incoming request' line is not written.
 *
 * Logging is a visible share of a small request's cost, so the common case is built by hand:
 * - The completed line is pino's own line format, assembled from fields that cannot hold a
 *   credential (method, the URL with tokens cut out, ip, status, time) and written straight to
 *   the logger's destination. Handing pino an object cost ~5 µs per request (serialization, the
 *   redaction walk, the child's bindings); this costs well under one.
 * - Each request's logger (`request.log`) is created only when something logs through it; most
 *   requests never do, and a pino child per request cost ~1.5 µs.
 * Errored lines and everything else go through pino with its serializers and redaction.
 */
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify'
import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream, type Logger } from 'pino'
import type { Metrics } from '../lib/metrics.js'

/**
 * A request URL for the log: the query string may carry a token (WebSocket), which is cut out in
 * every spelling a server or proxy might split on: `?token=`, `&token=`, `;token=`, percent-encoded
 * (`token%3D`), any case, and names that end in token (`access_token`, `session_token`). A value
 * runs to the next `&` (the query parser keeps `;` and `#` in it). A name spelled with escapes
 * (`%74oken=`, which the query parser decodes to `token` and the gateway accepts) is found in the
 * decoded URL: then the whole query is cut, since its raw spelling cannot be masked piece by piece.
 */
export function loggedUrl(url: string): string {
  // the Bot API carries its token in the path: /bot<token>/<method>, /file/bot<token>/<file_path>
  if (BOT_API_PATH.test(url)) url = url.replace(BOT_API_PATH, (_all, file: string | undefined) => `/${file ? 'file/' : ''}bot[redacted]`)
  // a QR login page carries its code's token in the path: /qr/<token>
  if (QR_PAGE_PATH.test(url)) url = url.replace(QR_PAGE_PATH, '/qr/[redacted]')
  if (!MAYBE_CREDENTIAL.test(url)) return url
  const masked = url.replace(CREDENTIALS, '$1[redacted]')
  if (!UNMASKED.test(percentDecoded(masked))) return masked
  const query = masked.search(/[?;]/)
  return query < 0 ? '[redacted]' : `${masked.slice(0, query + 1)}[redacted]`
}
const MAYBE_CREDENTIAL = /token|%[0-9a-f]{2}/i
/** `/bot<token>` up to the next `/` or `?` (also behind repeated slashes, which the router may accept) */
const BOT_API_PATH = /^\/+(file\/+)?bot[^/?#]*/
/** `/qr/<token>` up to the next `/` or `?` */
const QR_PAGE_PATH = /^\/+qr\/+[^/?#]*/
const CREDENTIALS = /(token(?:=|%3d))[^&]*/gi
/** a credential name with a value that is not (all) the mask */
const UNMASKED = /token=(?!\[redacted\](?:&|$))/i

/** `text` with every %XX decoded as one character (repeatedly: double encoding too), never throwing. */
function percentDecoded(text: string): string {
  for (let round = 0; round < 4 && text.includes('%'); round++) {
    const next = text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    if (next === text) break
    text = next
  }
  return text
}

/** Request fields for pino-written lines, without credentials. */
export const serializers = {
  req: (request: { method: string; url: string; ip?: string; id?: string }) => ({
    id: request.id,
    method: request.method,
    url: loggedUrl(request.url),
    ip: request.ip,
  }),
}

export interface AccessFields {
  reqId: string
  method: string
  url: string
  ip: string | undefined
  statusCode: number
  responseTime: number
}

const MESSAGE = ',"msg":"request completed"}\n'

/**
 * Writes the 'request completed' line for `logger` exactly as `logger.info({reqId, req, res,
 * responseTime}, 'request completed')` would (same keys, order and bindings), without the
 * round trip through pino. Loggers whose destination needs pino's per-line metadata (multistream)
 * are handed the object instead.
 */
export function accessWriter(logger: Logger): (fields: AccessFields) => void {
  const symbols = pino.symbols as unknown as Record<string, symbol>
  const holder = logger as unknown as Record<symbol, unknown>
  const stream = holder[symbols.streamSym] as DestinationStream & Record<symbol, unknown>
  const chindings = holder[symbols.chindingsSym] as string
  const time = holder[symbols.timeSym] as () => string
  const level = `{"level":${logger.levels.values.info}`
  if (!stream || typeof chindings !== 'string' || typeof time !== 'function' || stream[symbols.needsMetadataGsym]) {
    return ({ reqId, method, url, ip, statusCode, responseTime }) =>
      logger.info({ reqId, req: { method, url: loggedUrl(url), ip }, res: { statusCode }, responseTime }, 'request completed')
  }
  // every value is written as JSON: a request refused before its socket was read (an upgrade
  // refused at once) may have no address, and `undefined` is not JSON
  return ({ reqId, method, url, ip, statusCode, responseTime }) => {
    stream.write(
      `${level}${time()}${chindings},"reqId":${JSON.stringify(reqId ?? null)},"req":{"method":${JSON.stringify(method ?? null)},` +
        `"url":${JSON.stringify(loggedUrl(url ?? ''))},"ip":${JSON.stringify(ip ?? null)}},"res":{"statusCode":${Number.isFinite(statusCode) ? statusCode : 0}},` +
        `"responseTime":${Number.isFinite(responseTime) ? responseTime : 0}${MESSAGE}`,
    )
  }
}

/** What every finished request also feeds: the metrics, and the slow-request warning past `slowMs`. */
export interface RequestObserver {
  metrics: Metrics
  slowMs: number
}

class RequestLog extends LogController {
  private readonly writeAccess: (fields: AccessFields) => void

  constructor(
    private readonly access: Logger,
    private readonly observer: RequestObserver | null,
  ) {
    super()
    this.writeAccess = accessWriter(access)
  }

  override incomingRequest() {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    if (this.observer) this.observe(request, reply)
    if (error) {
      const line = { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }
      reply.log.error({ ...line, err: error }, 'request errored')
    } else if (this.access.isLevelEnabled('info')) {
      this.writeAccess({
        reqId: request.id,
        method: request.method,
        url: request.url,
        ip: request.ip,
        statusCode: reply.statusCode,
        responseTime: reply.elapsedTime,
      })
    }
  }

  private observe(request: FastifyRequest, reply: FastifyReply) {
    const { metrics, slowMs } = this.observer!
    const route = request.routeOptions.url ?? null
    const took = reply.elapsedTime
    metrics.request(route, request.method, reply.statusCode, took)
    // a WebSocket's request lasts as long as the socket; a long poll waits on purpose
    if (took < slowMs || request.raw.headers.upgrade !== undefined) return
    metrics.slowRequest()
    this.access.warn(
      {
        reqId: request.id,
        req: { method: request.method, url: loggedUrl(request.url), route },
        res: { statusCode: reply.statusCode },
        responseTime: took,
      },
      'slow request',
    )
  }
}

/** A request id a client or proxy sent in X-Request-Id is kept when it looks like one. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/

/**
 * Request ids: the caller's X-Request-Id when it is a plain token, else `<instance>-<counter>`
 * (the instance part tells two servers' ids apart in one log stream).
 */
export function requestIds(): (raw: IncomingMessage) => string {
  const instance = randomBytes(4).toString('hex')
  let next = 0
  return (raw) => {
    const given = raw.headers['x-request-id']
    if (typeof given === 'string' && CLIENT_REQUEST_ID.test(given)) return given
    next = next >= 2_147_483_647 ? 1 : next + 1
    return `${instance}-${next.toString(36)}`
  }
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

/** A request's logger that becomes a pino child (with the request id bound) on first use. */
class LazyChild {
  private real: Logger | null = null

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): Logger {
    return (this.real ??= this.parent.child(this.bindings, this.options))
  }

  get level() {
    return this.real ? this.real.level : (this.options.level ?? this.parent.level)
  }
  set level(level: string) {
    this.logger.level = level
  }
  isLevelEnabled(level: string) {
    // without a level of its own the child answers as its parent would
    return (this.real ?? (this.options.level ? this.logger : this.parent)).isLevelEnabled(level)
  }
  child(bindings: Bindings, options?: ChildLoggerOptions) {
    return this.logger.child(bindings, options)
  }
}
for (const method of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] satisfies LogMethod[]) {
  Object.defineProperty(LazyChild.prototype, method, {
    value: function (this: { logger: Logger }, ...args: unknown[]) {
      return (this.logger[method] as (...a: unknown[]) => void)(...args)
    },
  })
}

/**
 * Fastify options for request logging through `log`: the logger (with the credential-free request
 * serializer), the one-line-per-request controller, and the lazy per-request child.
 */
export function requestLogging(log: Logger, observer: RequestObserver | null = null) {
  return {
    loggerInstance: log.child({}, { serializers }) as FastifyBaseLogger,
    logController: new RequestLog(log.child({}, { redact: [] }), observer),
    genReqId: requestIds(),
    childLoggerFactory: (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) =>
      new LazyChild(logger as Logger, bindings, options) as unknown as FastifyBaseLogger,
  }
}
