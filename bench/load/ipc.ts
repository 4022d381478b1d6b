/** The load-process side of lib/load.ts: answers each IPC message with the handler's result. */

export function serve(handler: (message: any) => Promise<unknown>) {
  if (!process.send) throw new Error('run me through bench/run.ts (no IPC channel)')
  process.on('message', (message) => {
    handler(message).then(
      (result) => process.send!({ ok: true, result }),
      (error: unknown) => process.send!({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    )
  })
  // The orchestrator disconnecting means: done. Open sockets must not keep the process alive.
  process.on('disconnect', () => process.exit(0))
}
