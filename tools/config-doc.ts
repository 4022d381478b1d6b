/**
 * docs/configuration.md, rendered from the variables table in src/config.ts.
 *
 *   npm run docs:config             writes docs/configuration.md
 *   npm run docs:config -- --check  exits 1 when docs/configuration.md differs from what it would write
 */
import fs from 'node:fs'
import path from 'node:path'
import { SECTIONS, type Section } from '../src/config.js'

export const CONFIGURATION_DOC = path.resolve(import.meta.dirname, '../docs/configuration.md')

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ')

const anchor = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-')

/** The document's text. Pure: the same table gives the same bytes. */
export function renderConfigurationDoc(sections: readonly Section[] = SECTIONS): string {
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated from src/config.ts by `npm run docs:config`; edit the table there, not this file. -->',
    '',
    'Tern is configured by environment variables, all optional; a blank value counts as unset. The',
    'server, the video service (`npm run start:video`) and the CLI read the same ones. A bad value',
    'stops start-up with one line per problem, naming the variable:',
    '',
    '```',
    'tern: invalid configuration: PORT: must be an integer from 0 to 65535 (got "abc")',
    '```',
    '',
    'Secrets (`ADMIN_PASSWORD`, `SECRET_KEY`, `VAPID_PRIVATE_KEY`, `VIDEO_SECRET`, `OAUTH_PROVIDERS`)',
    'are never echoed in such a line. A boolean is `true`/`false`, `1`/`0`, `yes`/`no` or `on`/`off`.',
    'A rate limit `<requests>/<seconds>` allows that many requests per window of that many seconds.',
    '',
    sections.map((section) => `[${section.title}](#${anchor(section.title)})`).join(' · '),
  ]
  for (const section of sections) {
    lines.push('', `## ${section.title}`, '', '| variable | type | default | description |', '|---|---|---|---|')
    for (const variable of section.variables) {
      lines.push(`| \`${variable.name}\` | ${cell(variable.type)} | ${cell(variable.default)} | ${cell(variable.description)} |`)
    }
  }
  return `${lines.join('\n')}\n`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const wanted = renderConfigurationDoc()
  const relative = path.relative(process.cwd(), CONFIGURATION_DOC)
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(CONFIGURATION_DOC) ? fs.readFileSync(CONFIGURATION_DOC, 'utf8') : ''
    if (current !== wanted) {
      process.stderr.write(`${relative} differs from src/config.ts: run npm run docs:config\n`)
      process.exit(1)
    }
    process.stdout.write(`${relative} matches src/config.ts\n`)
  } else {
    fs.writeFileSync(CONFIGURATION_DOC, wanted)
    process.stdout.write(`wrote ${relative}\n`)
  }
}
