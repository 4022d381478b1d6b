/**
 * A fuzz pass over every route (property-based, fast-check): requests built from each operation's
 * own schema, then bent (wrong types, huge and non-integer numbers, prototype names as keys and
 * values, U+0000, lone surrogates, long strings, junk ids and paths, the wrong content type or none,
 * malformed JSON), with and without a session (fuzz-requests.ts). Whatever comes in, the answer is
 * never a 5xx, an API error is always the JSON envelope, and the server is still up at the end.
 * fuzz-db.test.ts adds that a refused request changes nothing in the database.
 *
 * FUZZ_SEED picks another sequence (the seed is printed); FUZZ_RUNS the number of requests.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { startTestServer } from '../harness/server.js'
import { FUZZ_SEED, fuzzRequests, fuzzRuns } from './fuzz-requests.js'

const SEED = FUZZ_SEED
const RUNS = fuzzRuns(10_000)
console.log(`# fuzz: seed ${SEED}, ${RUNS} requests (FUZZ_SEED, FUZZ_RUNS)`)

const server = await startTestServer({ env: { WS_MAX_SOCKETS_PER_USER: '5' } })
const fuzz = await fuzzRequests(server)
const { operations } = fuzz

const failures: string[] = []
let sent = 0

test(`fuzz: ${RUNS} requests over every route answer without a 5xx, and API errors in the envelope`, {
  timeout: Math.max(600_000, RUNS * 20),
}, async () => {
  const perOperation = Math.ceil(RUNS / operations.length)
  const started = Date.now()
  for (const [index, op] of operations.entries()) {
    const property = fc.asyncProperty(fuzz.request, fuzz.arbitraryFor(op.body), async (input, body) => {
      const prepared = await fuzz.prepare(op, input, body)
      sent++
      const answer = await fuzz.deliver(prepared)
      if (typeof answer === 'string') {
        failures.push(`${prepared.what}: ${answer}`)
        return false
      }
      const problems = fuzz.problemsOf(prepared, answer)
      if (problems.length) failures.push(`${prepared.what} → ${answer.status}: ${problems.join(', ')}: ${answer.text.slice(0, 300)}`)
      return problems.length === 0
    })
    // a failing operation is recorded and the pass goes on: one report lists every kind of failure
    const details = await fc.check(property, { numRuns: perOperation, seed: SEED + index, endOnFailure: true })
    if (details.errorInstance) failures.push(`${op.method} ${op.path}: the fuzzer itself failed: ${String(details.errorInstance)}`)
  }
  console.log(`# fuzz: ${sent} requests over ${operations.length} operations in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  assert.deepEqual(failures.slice(0, 20), [], `${failures.length} bad answers`)
  assert.equal((await fetch(`${server.url}/health`)).status, 200, 'the server is still up')
  assert.ok(sent >= RUNS, `${sent} requests sent`)
})
