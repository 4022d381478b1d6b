/**
 * docs/configuration.md is what tools/config-doc.ts renders from src/config.ts's variables table:
 * a variable added, removed or changed there without `npm run docs:config` fails here.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import test from 'node:test'
import { SECTIONS, VARIABLES } from '../../src/config.js'
import { CONFIGURATION_DOC, renderConfigurationDoc } from '../../tools/config-doc.js'

test('docs/configuration.md is the document src/config.ts generates (npm run docs:config)', () => {
  assert.ok(fs.existsSync(CONFIGURATION_DOC), 'docs/configuration.md exists')
  const current = fs.readFileSync(CONFIGURATION_DOC, 'utf8')
  const wanted = renderConfigurationDoc()
  if (current !== wanted) {
    const have = current.split('\n')
    const want = wanted.split('\n')
    const line = want.findIndex((text, i) => text !== have[i])
    assert.fail(
      `docs/configuration.md differs from src/config.ts from line ${line + 1} on (run npm run docs:config):\n  has:    ${have[line]}\n  should: ${want[line]}`,
    )
  }
})

test('a changed table renders a different document (positive control)', () => {
  const [first, ...rest] = SECTIONS
  const changed = [{ ...first, variables: [{ ...first.variables[0], default: '`1234`' }, ...first.variables.slice(1)] }, ...rest]
  assert.notEqual(renderConfigurationDoc(changed), renderConfigurationDoc())
})

test('every variable is declared once, and documented with a type, a default and a description', () => {
  const names = VARIABLES.map((variable) => variable.name)
  assert.ok(names.length > 100, `the table was read (${names.length} variables)`)
  assert.deepEqual(
    names.filter((name, i) => names.indexOf(name) !== i),
    [],
    'no variable twice',
  )
  for (const variable of VARIABLES) {
    assert.match(variable.name, /^[A-Z][A-Z0-9_]*$/, variable.name)
    for (const field of ['type', 'default', 'description'] as const)
      assert.ok(variable[field].trim() !== '', `${variable.name} has a ${field}`)
    assert.ok(!variable.description.includes('\n'), `${variable.name}: one line`)
  }
  const doc = fs.readFileSync(CONFIGURATION_DOC, 'utf8')
  for (const name of names) assert.ok(doc.includes(`| \`${name}\` |`), `${name} has a row in docs/configuration.md`)
})
