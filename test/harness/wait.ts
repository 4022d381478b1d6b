/** Polling for eventually-true conditions (delivery receipts, scheduler runs) and plain sleeps. */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Calls `probe` every `intervalMs` until it returns something other than `undefined`, and returns
 * that; after `timeoutMs` it fails with `message` and the last value seen by `describe`.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  { timeoutMs = 1000, intervalMs = 50, message = 'condition' }: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`${message} not met within ${timeoutMs} ms`)
    await sleep(intervalMs)
  }
}
