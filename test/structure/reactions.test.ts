/**
 * Reactions are registered in one place: only the start-up wiring (events/reactions.ts, and app.ts
 * for the work queue's wake-up) registers listeners of committed events (`ctx.events.on`) or of
 * control messages (`ctx.control.on`), and only the realtime transport subscribes to the fan-out's
 * frames. Read from the source.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import test from 'node:test'

const src = path.resolve(import.meta.dirname, '../../src')
const WIRING = new Set(['events/reactions.ts', 'app.ts'])

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sources(full)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : []
  })
}

/** Registrations of bus or control listeners in a file's text: `.events.on(`, `.control.on(`, and the same on a bare `events`/`control`. */
const LISTENER = /\b(?:events|control)\s*\.\s*on\s*\(/g
/** Subscriptions to the fan-out's frames or control messages. */
const FANOUT = /\bfanout\s*\.\s*subscribe(?:Control)?\s*\(|\btransport\s*\.\s*subscribeControl\s*\(/g

const registrations = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].length

const files = sources(src).map((file) => ({
  file: path.relative(src, file).split(path.sep).join('/'),
  text: fs.readFileSync(file, 'utf8'),
}))

test('the patterns find registrations where there are some (positive control)', () => {
  assert.equal(registrations("ctx.events.on('message.new', f)\nthis.ctx.control.on('bot.update', g)\nevents.on('x', h)", LISTENER), 3)
  assert.equal(registrations('ctx.fanout.subscribe((d) => d)\nctx.fanout.subscribeControl(h)', FANOUT), 2)
  assert.equal(registrations("socket.on('close', f)\nctx.events.emit([])\nctx.events.listens('x')", LISTENER), 0)
  const wiring = files.find(({ file }) => file === 'events/reactions.ts')
  assert.ok(wiring && registrations(wiring.text, LISTENER) >= 5, 'the start-up wiring registers the listeners')
})

test('no file but the start-up wiring registers listeners of events or control messages', () => {
  const outside = files.filter(({ file, text }) => !WIRING.has(file) && registrations(text, LISTENER) > 0).map(({ file }) => file)
  assert.deepEqual(outside, [])
})

test('only the realtime transport (and the control channel over it) subscribes to the fan-out', () => {
  const allowed = (file: string) => file.startsWith('realtime/') || file === 'events/control.ts'
  const outside = files.filter(({ file, text }) => !allowed(file) && registrations(text, FANOUT) > 0).map(({ file }) => file)
  assert.ok(
    files.some(({ file, text }) => file === 'realtime/gateway.ts' && registrations(text, FANOUT) > 0),
    'the gateway subscribes',
  )
  assert.deepEqual(outside, [])
})
