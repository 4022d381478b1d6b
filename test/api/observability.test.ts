/**
 * What an operator watches (docs/operations.md): /metrics (Prometheus, protected), /ready,
 * request ids in answers and log lines, slow requests and slow queries logged with their timings.
 */
import assert from 'node:assert/strict'
import net from 'node:net'
import test, { after } from 'node:test'
import { sql } from 'kysely'
import { assertError } from '../harness/assert.js'
import { captureLog } from '../harness/log-capture.js'
import { TestSocket } from '../harness/socket.js'
import { startTestServer } from '../harness/server.js'

const V2 = '/api.v2/api'
const METRICS_TOKEN = 'metrics-token-for-tests-0123456789'

const log = captureLog('info')
const server = await startTestServer({ env: { METRICS_TOKEN, SLOW_REQUEST_MS: '60000', SLOW_QUERY_MS: '20' }, log: log.logger })
after(() => server.close())

async function scrape(token: string | null = METRICS_TOKEN) {
  return server.api.get('/metrics', token === null ? {} : { headers: { authorization: `Bearer ${token}` } })
}

/** the value of one sample line (`name{labels} value`), or undefined */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line)
    if (!match || match[1] !== name) continue
    const found = new Map([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]))
    if (Object.entries(labels).every(([key, value]) => found.get(key) === value)) return Number(match[3])
  }
  return undefined
}

test('/metrics asks for METRICS_TOKEN: none or a wrong one is 401 in the envelope, the right one gets Prometheus text', async () => {
  assertError(await scrape(null), 401, 'unauthorized')
  assertError(await scrape('wrong-token'), 401, 'unauthorized')
  const res = await scrape()
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/)
  assert.match(res.text, /# TYPE tern_http_request_duration_seconds histogram/)
  // the default process metrics, event-loop delay among them
  assert.ok(sample(res.text, 'tern_nodejs_eventloop_lag_seconds') !== undefined, 'event-loop lag is exported')
  assert.ok(sample(res.text, 'tern_process_resident_memory_bytes')! > 0)
})

test('requests are counted by route pattern (not URL), method and status class', async () => {
  const user = await server.registerUser()
  const before = (await scrape()).text
  const route = `${V2}/calls/:id`
  const missingBefore = sample(before, 'tern_http_request_duration_seconds_count', { route, method: 'GET', status: '4xx' }) ?? 0
  const healthBefore = sample(before, 'tern_http_request_duration_seconds_count', { route: '/health', method: 'GET', status: '2xx' }) ?? 0
  assert.equal((await user.api.get(`${V2}/calls/987654321`)).status, 404)
  assert.equal((await user.api.get(`${V2}/calls/987654322`)).status, 404)
  assert.equal((await server.api.get('/health')).status, 200)
  const text = (await scrape()).text
  assert.equal(sample(text, 'tern_http_request_duration_seconds_count', { route, method: 'GET', status: '4xx' }), missingBefore + 2)
  assert.equal(
    sample(text, 'tern_http_request_duration_seconds_count', { route: '/health', method: 'GET', status: '2xx' }),
    healthBefore + 1,
  )
  // the ids never become labels: one series for the pattern
  assert.ok(!text.includes('987654321'))
})

test('open sockets, frames sent, jobs and the update log are exported', async () => {
  const [a, b] = [await server.registerUser(), await server.registerUser()]
  const base = (await scrape()).text
  const socketsBefore = sample(base, 'tern_ws_open_sockets')!
  const framesBefore = sample(base, 'tern_ws_frames_sent_total')!
  const socket = await TestSocket.connect(server.url, b.token)
  let text = (await scrape()).text
  assert.equal(sample(text, 'tern_ws_open_sockets'), socketsBefore + 1)
  const sent = await a.api.post(`${V2}/messages/send`, { receiver_id: b.id, content: 'counted' })
  assert.equal(sent.status, 200)
  await socket.next('message.new')
  text = (await scrape()).text
  assert.ok(sample(text, 'tern_ws_frames_sent_total')! >= framesBefore + 2, 'ready and message.new were counted')
  assert.ok(sample(text, 'tern_update_log_rows')! >= 1)
  // the job runner's figures, by job
  assert.ok(sample(text, 'tern_job_runs', { job: 'scheduled-messages' }) !== undefined)
  assert.ok(sample(text, 'tern_job_failures', { job: 'scheduled-messages' }) !== undefined)
  if (server.ctx.dialect === 'postgres') assert.ok(sample(text, 'tern_db_pool_connections', { state: 'total' })! >= 1)
  socket.ws.close()
  await new Promise((resolve) => socket.ws.once('close', resolve))
  for (let i = 0; i < 50 && sample((await scrape()).text, 'tern_ws_open_sockets') !== socketsBefore; i++)
    await new Promise((r) => setTimeout(r, 20))
  assert.equal(sample((await scrape()).text, 'tern_ws_open_sockets'), socketsBefore)
})

test('every answer carries X-Request-Id, the same id its log line has; a sane client id is kept, a hostile one replaced', async () => {
  const res = await server.api.get('/health')
  const id = res.headers.get('x-request-id')
  assert.match(id ?? '', /^[0-9a-f]{8}-[0-9a-z]+$/)
  const line = log.entries().find((entry) => entry.msg === 'request completed' && entry.reqId === id)
  assert.ok(line, 'the request line names the same id')
  assert.equal(line.req.url, '/health')

  const kept = await server.api.get('/health', { headers: { 'x-request-id': 'lb-7f3a.42:upstream' } })
  assert.equal(kept.headers.get('x-request-id'), 'lb-7f3a.42:upstream')
  for (const hostile of ['has space', 'x'.repeat(129), 'quote"inside', '{"json":1}']) {
    const replaced = await server.api.get('/health', { headers: { 'x-request-id': hostile } })
    assert.match(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f]{8}-[0-9a-z]+$/, hostile)
  }
  // errors too
  const missing = await server.api.get(`${V2}/nope`)
  assert.equal(missing.status, 404)
  assert.ok(missing.headers.get('x-request-id'))
})

test('a slow query is logged with its SQL and time (never its parameters) and counted; a quick one is not', async () => {
  const before = log.entries().filter((entry) => entry.msg === 'slow query').length
  // positive control below; a quick query first
  await sql`select ${'quick-secret-parameter'} as x`.execute(server.ctx.db)
  assert.equal(log.entries().filter((entry) => entry.msg === 'slow query').length, before)
  if (server.ctx.dialect === 'postgres') await sql`select pg_sleep(0.05), ${'slow-secret-parameter'}::text as p`.execute(server.ctx.db)
  else
    await sql`with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000) select count(*), ${'slow-secret-parameter'} as p from c`.execute(
      server.ctx.db,
    )
  const slow = log.entries().filter((entry) => entry.msg === 'slow query')
  assert.equal(slow.length, before + 1)
  assert.ok(slow.at(-1)!.ms >= 20)
  assert.match(slow.at(-1)!.sql, /select/)
  assert.ok(!log.text().includes('slow-secret-parameter'))
  assert.ok(sample((await scrape()).text, 'tern_db_slow_queries_total')! >= 1)
})

test('/ready checks the database, Redis and the migrations; a pending migration makes it 503 in the envelope', async () => {
  const ready = await server.api.get('/ready')
  assert.equal(ready.status, 200)
  assert.equal(ready.body.data.status, 'ready')
  assert.equal(ready.body.data.database, 'ok')
  assert.equal(ready.body.data.migrations, 'ok')
  assert.equal(ready.body.data.redis, server.ctx.redis ? 'ok' : 'off')

  const last = await sql<{
    name: string
    timestamp: unknown
  }>`select name, timestamp from kysely_migration order by name desc limit 1`.execute(server.ctx.db)
  const row = last.rows[0]
  await sql`delete from kysely_migration where name = ${row.name}`.execute(server.ctx.db)
  try {
    const notReady = await server.api.get('/ready')
    assert.equal(notReady.status, 503)
    assert.equal(notReady.body.success, false)
    assert.equal(notReady.body.error.code, 'internal_error')
    assert.equal(notReady.body.data.migrations, 'pending')
    assert.match(notReady.body.error.message, /migrations pending/)
  } finally {
    await sql`insert into kysely_migration (name, timestamp) values (${row.name}, ${row.timestamp as string})`.execute(server.ctx.db)
  }
  assert.equal((await server.api.get('/ready')).status, 200)
})

test('a slow request is logged with its route and time and counted; METRICS_TOKEN unset means /metrics is 404', async () => {
  const slowLog = captureLog('info')
  const slow = await startTestServer({ env: { SLOW_REQUEST_MS: '1' }, log: slowLog.logger })
  try {
    const user = await slow.registerUser()
    // registering hashes a password: well over a millisecond
    assert.ok(user.id > 0)
    const lines = slowLog.entries().filter((entry) => entry.msg === 'slow request')
    assert.ok(
      lines.some((entry) => entry.req.route === `${V2}/auth/register` && entry.responseTime >= 1),
      JSON.stringify(lines),
    )
    assertError(await slow.api.get('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }), 404, 'not_found')
  } finally {
    await slow.close()
  }
  // the control: the first server (60 s threshold) logged none
  assert.equal(log.entries().filter((entry) => entry.msg === 'slow request').length, 0)
})

async function freePort(): Promise<number> {
  const probe = net.createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as net.AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

test('METRICS_PORT serves /metrics on a listener of its own and not on the main one', async () => {
  const port = await freePort()
  const separate = await startTestServer({ env: { METRICS_PORT: String(port) } })
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`)
    assert.equal(res.status, 200)
    assert.match(await res.text(), /tern_http_request_duration_seconds/)
    assert.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 404)
    const main = await separate.api.get('/metrics')
    assertError(main, 404, 'not_found')
    assert.match(main.body.error.message, new RegExp(`METRICS_PORT ${port}`))
  } finally {
    await separate.close()
  }
  // closed with the server
  await assert.rejects(fetch(`http://127.0.0.1:${port}/metrics`))
})
