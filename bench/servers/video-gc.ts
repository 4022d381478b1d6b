/**
 * The video service as `npm run start:video` runs it (dist/), plus an IPC hook for the bench: on
 * any message it collects garbage (node --expose-gc) and answers process.memoryUsage(), so the
 * memory a participant holds is read without the garbage around it.
 */
// the built service (npm run bench builds first); a computed specifier, so type-checking needs no dist/
await import(new URL('../../dist/src/video/main.js', import.meta.url).href)

const gc = (globalThis as { gc?: () => void }).gc
if (!gc || !process.send) throw new Error('run with --expose-gc and an IPC channel')
process.on('message', () => {
  gc()
  gc()
  process.send!(process.memoryUsage())
})
