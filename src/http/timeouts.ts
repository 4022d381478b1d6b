/**
 * How long a client may take to send a request (HTTP_REQUEST_TIMEOUT_SECONDS, `limit` here), so
 * that nobody holds connections open by sending slowly:
 * - the headers: within `limit` of the request's first byte (Node's headersTimeout; a connection
 *   that sends nothing at all is closed after `limit` too);
 * - an ordinary body (JSON, at most 1 MiB): in full within `limit` of the headers;
 * - an upload body (multipart/form-data, tus's application/offset+octet-stream): for as long as it
 *   takes, as long as it never pauses for `limit`. A total limit would cut a 2 GiB file on a slow
 *   link (at 30 s, anything slower than 70 MiB/s), a pause limit still frees a stalled connection
 *   (nginx's client_body_timeout works the same way). Once the answer is out (an upload refused
 *   early), the rest of the body gets `limit` in all.
 * A request that misses its time is answered 408 request_timeout (when no answer is out yet) and
 * its connection closed. An upgraded WebSocket is no longer an HTTP request: none of this touches it.
 */
import http from 'node:http'
import type { Socket } from 'node:net'

const UPLOAD = /^\s*(?:multipart\/form-data|application\/offset\+octet-stream)\s*(?:;|$)/i

/** `socket` missed its time: answer 408 on it and close it (`upload`: an upload body paused). */
export type OnTimeout = (socket: Socket, upload: boolean) => void

/**
 * An idle kept-alive connection stays open this long (Fastify's own default, which it does not
 * apply to a server it did not create; Node's 5 s would close connections that load balancers and
 * clients expect to reuse, racing their next request).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000

/** An HTTP server for `handler` that holds its requests to `limitSeconds` as above. */
export function timedServer(limitSeconds: number, handler: http.RequestListener, onTimeout: OnTimeout): http.Server {
  const limit = limitSeconds * 1000
  const server = http.createServer(
    {
      headersTimeout: limit,
      // Node's whole-request limit knows no kind of body: the body's limit is watchBody's
      requestTimeout: 0,
      // how often Node looks for headers that are late (its default is every 30 s)
      connectionsCheckingInterval: Math.min(5000, limit / 2),
    },
    (request, response) => {
      if (hasBody(request)) watchBody(request, response, limit, onTimeout)
      handler(request, response)
    },
  )
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
  return server
}

const hasBody = (request: http.IncomingMessage) =>
  request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] ?? '0') !== '0'

function watchBody(request: http.IncomingMessage, response: http.ServerResponse, limit: number, onTimeout: OnTimeout) {
  const upload = UPLOAD.test(request.headers['content-type'] ?? '')
  const socket = request.socket
  const expire = () => {
    if (request.complete) return
    if (response.headersSent) socket.destroy()
    else onTimeout(socket, upload)
  }
  let timer: NodeJS.Timeout | undefined
  if (upload) {
    // the socket's idle timer, which Node restarts on every chunk it reads
    request.setTimeout(limit, expire)
    // Without a listener Node destroys an idle socket: once the body is in, a quiet one is a
    // server still at work on the file.
    response.on('timeout', keepOpen)
    response.once('finish', () => {
      if (!request.complete) timer = setTimeout(expire, limit).unref()
    })
  } else {
    // unref: a request's clock never keeps the process alive (a server closing, a test ending)
    timer = setTimeout(expire, limit).unref()
  }
  const done = () => {
    clearTimeout(timer)
    // the idle timer is this request's while its answer is unfinished (then Node's keep-alive owns it)
    if (upload && !response.writableFinished) socket.setTimeout(0)
  }
  // 'close' comes once the body has been read to its end, or when the connection is gone
  request.once('close', done)
}

function keepOpen() {}
