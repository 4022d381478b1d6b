/**
 * /openapi.json is a valid OpenAPI 3 document a code generator can use: Redocly's recommended
 * rules find no error, and every operation has a summary, a unique operationId, tags and its
 * error answers in the envelope.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { startTestServer } from '../harness/server.js'

const server = await startTestServer()
const text = await (await fetch(`${server.url}/openapi.json`)).text()
const doc = JSON.parse(text)
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']
const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, operation]) => ({ where: `${method.toUpperCase()} ${path}`, operation })),
)

test("Redocly's recommended rules find no error in the document", async () => {
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({ source: text, config, absoluteRef: 'openapi.json' } as Parameters<typeof lintFromString>[0])
  const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)
  assert.deepEqual(errors, [])
  // the warnings left are answers that have no 4xx (health, stats, premium plans, the VAPID key, the sign-out page) or are a redirect (signing out)
  const warned = new Set(problems.filter((p) => p.severity === 'warn').map((p) => `${p.ruleId} ${p.location[0]?.pointer}`))
  for (const warning of warned)
    assert.match(warning, /~1(health|ready|stats|logout|plans|vapid-public-key)\/get\/responses$|~1logout\/post\/responses$/, warning)
})

test("no keyword only Tern's validator reads leaks into the document", () => {
  assert.ok(!text.includes('errorMessage'))
})

test('every operation has a summary, a unique operationId, tags and its error answers', () => {
  assert.ok(operations.length > 60, `${operations.length} operations`)
  const ids = new Set<string>()
  for (const { where, operation } of operations) {
    assert.ok(typeof operation.summary === 'string' && operation.summary.length > 5, `${where}: summary`)
    assert.match(operation.operationId, /^[a-z]+[A-Za-z0-9]*$/, `${where}: operationId`)
    assert.ok(!ids.has(operation.operationId), `${where}: operationId ${operation.operationId} is unique`)
    ids.add(operation.operationId)
    assert.ok(Array.isArray(operation.tags) && operation.tags.length > 0, `${where}: tags`)
    assert.ok(Array.isArray(operation.security), `${where}: security says public ([]) or bearer`)
    const codes = Object.keys(operation.responses)
    if (codes.every((code) => code.startsWith('3'))) continue // a redirect
    const errors = codes.filter((code) => Number(code) >= 400)
    assert.ok(errors.length > 0, `${where}: error answers`)
    for (const code of errors.filter((c) => Number(c) < 500)) {
      const schema = operation.responses[code].content?.['application/json']?.schema
      assert.deepEqual(Object.keys(schema?.properties ?? {}).sort(), ['error', 'success'], `${where} ${code}: the envelope`)
    }
    if (operation.security.length > 0) assert.ok(codes.includes('401'), `${where}: a secured operation answers 401`)
  }
  // V3 repeats V2 and stays out of the document
  assert.ok(!Object.keys(doc.paths).some((path) => path.startsWith('/api.v3/')))
})

test('a request field with a default is optional in the document; one without stays required', () => {
  const chatList = doc.paths['/api.v2/api/chat_list'].get.parameters as { name: string; required?: boolean }[]
  for (const name of ['page', 'per_page', 'archived'])
    assert.notEqual(chatList.find((p) => p.name === name)?.required, true, `${name} has a default`)
  // control: chat_id of groups/info has no default and is required
  const groupInfo = doc.paths['/api.v2/api/groups/info'].get.parameters as { name: string; required?: boolean }[]
  assert.equal(groupInfo.find((p) => p.name === 'chat_id')?.required, true)
  // bodies too: messages/send's content defaults to '', its chat is required by its own rules
  const send = doc.paths['/api.v2/api/messages/send'].post.requestBody.content['application/json'].schema
  for (const name of send.required ?? []) assert.equal(send.properties[name]?.default, undefined, `${name} is required but has a default`)
})
