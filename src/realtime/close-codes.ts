/** WebSocket close codes the gateway sends. A client reads the code to know whether to reconnect. */
export const CLOSE = {
  /** the server is stopping: reconnect (to another instance) and resume */
  goingAway: { code: 1001, reason: 'server shutting down' },
  /** a handler failed on this socket: reconnect and resume */
  internalError: { code: 1011, reason: 'internal error' },
  /** reading the log for a replay failed: reconnect and resume */
  replayFailed: { code: 1011, reason: 'replay failed' },
  /** the client read too slowly (over 1 MiB unsent): reconnect and resume */
  tooSlow: { code: 4008, reason: 'too slow: reconnect and resume' },
  /** the upgrade URL's seq or chats could not be read (the reason says how they should look) */
  badResume: { code: 1008, reason: 'bad resume position in the URL' },
  /** the session was ended (logout, revoked): do not reconnect with this token */
  sessionRevoked: { code: 4001, reason: 'session revoked' },
  /** the account was suspended: do not reconnect */
  accountSuspended: { code: 4003, reason: 'account suspended' },
  /** the user already has WS_MAX_SOCKETS_PER_USER sockets open on this instance */
  tooManySockets: { code: 4029, reason: 'too many sockets for this user' },
  /** the client kept sending frames at more than twice WS_FRAME_RATE_LIMIT after being told to slow down */
  frameFlood: { code: 1008, reason: 'too many frames' },
} as const
