import assert from 'node:assert/strict'
import path from 'node:path'
import test from 'node:test'
import { ConfigError, loadConfig } from './config.js'

test('defaults follow the variables table (docs/configuration.md)', () => {
  const c = loadConfig({})
  assert.equal(c.port, 3000)
  assert.equal(c.host, '127.0.0.1')
  assert.equal(c.publicBaseUrl, 'http://127.0.0.1:3000')
  assert.equal(c.dataDir, path.resolve('./data'))
  assert.equal(c.databaseUrl, `sqlite:${path.resolve('./data/tern.db')}`)
  assert.equal(c.dialect, 'sqlite')
  assert.equal(c.redisUrl, null)
  assert.equal(c.sessionTtlDays, 30)
  assert.equal(c.trustProxy, false)
  assert.deepEqual(c.registerRateLimit, { max: 5, windowMs: 300_000 })
  assert.equal(c.maxUploadBytes, 52_428_800)
  assert.equal(c.premiumMaxUploadBytes, 2_147_483_648)
  assert.equal(c.uploadDir, path.resolve('./data/uploads'))
  assert.equal(c.uploadSessionTtlSeconds, 86_400)
  assert.equal(c.uploadSweepIntervalSeconds, 600)
  assert.equal(c.httpRequestTimeoutSeconds, 30)
  assert.equal(c.sendFastPath, true)
  assert.ok(Object.isFrozen(c))
})

test('values are parsed and typed', () => {
  const c = loadConfig({
    PORT: '8080',
    DATABASE_URL: 'postgres://u@h/db',
    TRUST_PROXY: '1',
    REGISTER_RATE_LIMIT: '10/60',
    PUBLIC_BASE_URL: 'https://tern.example/',
    SEND_FAST_PATH: 'off',
    CORS_ORIGINS: 'https://a.example, https://b.example',
  })
  assert.equal(c.port, 8080)
  assert.equal(c.dialect, 'postgres')
  assert.equal(c.trustProxy, 1)
  assert.deepEqual(c.registerRateLimit, { max: 10, windowMs: 60_000 })
  assert.equal(c.publicBaseUrl, 'https://tern.example')
  assert.equal(c.sendFastPath, false)
  assert.deepEqual(c.corsOrigins, ['https://a.example', 'https://b.example'])
})

test('every problem is collected, each naming its variable', () => {
  try {
    loadConfig({ PORT: 'abc', DATABASE_URL: 'mysql://x', REDIS_URL: 'http://x', ADMIN_USERNAME: 'boss' })
    assert.fail('should have thrown')
  } catch (error) {
    assert.ok(error instanceof ConfigError)
    const names = error.problems.map((p) => p.split(':')[0])
    assert.deepEqual(names.sort(), ['ADMIN_USERNAME/ADMIN_PASSWORD', 'DATABASE_URL', 'PORT', 'REDIS_URL'])
  }
})

test('upload caps and the upload directory follow DATA_DIR and the variables', () => {
  const c = loadConfig({
    DATA_DIR: '/srv/tern',
    MAX_UPLOAD_BYTES: '1024',
    PREMIUM_MAX_UPLOAD_BYTES: '4096',
    UPLOAD_SESSION_TTL_SECONDS: '60',
  })
  assert.deepEqual([c.maxUploadBytes, c.premiumMaxUploadBytes, c.uploadSessionTtlSeconds], [1024, 4096, 60])
  assert.equal(c.uploadDir, '/srv/tern/uploads')
  assert.throws(() => loadConfig({ MAX_UPLOAD_BYTES: '0' }), /MAX_UPLOAD_BYTES/)
})

test('TRUST_PROXY is a hop count or a list of proxy addresses, never "trust everyone"', () => {
  assert.equal(loadConfig({}).trustProxy, false)
  assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false)
  assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2)
  assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,::1' }).trustProxy, ['10.0.0.1', '10.1.0.0/16', '::1'])
  for (const bad of ['true', 'yes', 'proxy.example', '10.0.0.0/33', '33']) {
    assert.throws(() => loadConfig({ TRUST_PROXY: bad }), /TRUST_PROXY/, bad)
  }
})

test('WS_MAX_SOCKETS_PER_USER caps sockets per user: 100 by default, an integer of at least 1', () => {
  assert.equal(loadConfig({}).wsMaxSocketsPerUser, 100)
  assert.equal(loadConfig({ WS_MAX_SOCKETS_PER_USER: '2' }).wsMaxSocketsPerUser, 2)
  for (const bad of ['0', '-1', '1.5', 'many']) {
    assert.throws(() => loadConfig({ WS_MAX_SOCKETS_PER_USER: bad }), /WS_MAX_SOCKETS_PER_USER/, bad)
  }
})

test("PUBLIC_BASE_URL defaults to the server's own listener, HOST and PORT", () => {
  assert.equal(loadConfig({ PORT: '8080' }).publicBaseUrl, 'http://127.0.0.1:8080')
  assert.equal(loadConfig({ HOST: '0.0.0.0', PORT: '80' }).publicBaseUrl, 'http://localhost:80')
  assert.equal(loadConfig({ HOST: '::1', PORT: '3000' }).publicBaseUrl, 'http://[::1]:3000')
  assert.equal(loadConfig({ HOST: 'tern.lan', PORT: '3000' }).publicBaseUrl, 'http://tern.lan:3000')
  assert.equal(loadConfig({ PORT: '8080', PUBLIC_BASE_URL: 'https://chat.example/' }).publicBaseUrl, 'https://chat.example')
})

test('PREMIUM_PLANS: the default plans; a JSON list of plans in roubles, kept in kopecks; a bad one stops start-up naming the problem', () => {
  assert.deepEqual(
    loadConfig({}).premiumPlans.map((p) => [p.id, p.months, p.price]),
    [
      ['monthly', 1, 30000],
      ['yearly', 12, 299000],
    ],
  )
  const plans = loadConfig({
    PREMIUM_PLANS:
      '[{"id":"week","title":"A week","months":1,"price_rub":99.99},{"id":"year","title":"Year","months":12,"price_rub":1000}]',
  }).premiumPlans
  assert.deepEqual(
    plans.map((p) => [p.id, p.price]),
    [
      ['week', 9999],
      ['year', 100000],
    ],
  )
  const bad = {
    'not json': 'must be a JSON list',
    '[]': '1 to 20 plans',
    '{"id":"a"}': '1 to 20 plans',
    '[{"id":"a","title":"A","months":1,"price_rub":-5}]': 'price_rub must be a positive',
    '[{"id":"a","title":"A","months":1,"price_rub":"300"}]': 'price_rub must be a positive',
    '[{"id":"a","title":"A","months":1,"price_rub":1.234}]': 'at most two decimals',
    '[{"id":"a","title":"A","months":1.5,"price_rub":1}]': 'months must be an integer',
    '[{"id":"A B","title":"A","months":1,"price_rub":1}]': 'id must be',
    '[{"id":"a","title":"A","months":1,"price_rub":1},{"id":"a","title":"B","months":2,"price_rub":2}]': 'twice',
    '[{"id":"a","title":"","months":1,"price_rub":1}]': 'title must be',
  }
  for (const [raw, message] of Object.entries(bad)) {
    assert.throws(
      () => loadConfig({ PREMIUM_PLANS: raw }),
      (error: Error) => error.message.includes('PREMIUM_PLANS') && error.message.includes(message),
      raw,
    )
  }
  assert.throws(() => loadConfig({ PAYMENT_PROVIDER: 'paypal' }), /PAYMENT_PROVIDER/)
  assert.equal(loadConfig({ PAYMENT_PROVIDER: 'manual' }).paymentProvider, 'manual')
})

test('PAYMENT_PROVIDER: none unless chosen; test only when set, and never with NODE_ENV=production', () => {
  assert.equal(loadConfig({}).paymentProvider, null)
  assert.equal(loadConfig({ PAYMENT_PROVIDER: 'test' }).paymentProvider, 'test')
  assert.throws(
    () => loadConfig({ PAYMENT_PROVIDER: 'test', NODE_ENV: 'production' }),
    /PAYMENT_PROVIDER: test .*refused with NODE_ENV=production/,
  )
  assert.equal(loadConfig({ PAYMENT_PROVIDER: 'manual', NODE_ENV: 'production' }).paymentProvider, 'manual')
})

test('LOG_FILE: the log goes to that file (an absolute path), else to stdout', () => {
  assert.equal(loadConfig({}).logFile, null)
  assert.equal(loadConfig({ LOG_FILE: '/var/log/tern/tern.log' }).logFile, '/var/log/tern/tern.log')
})
