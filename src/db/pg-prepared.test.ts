import assert from 'node:assert/strict'
import test from 'node:test'
import { sql } from 'kysely'
import { createTestDatabase, tempDir, testDatabaseUrl } from '../../test/harness/database.js'
import { createDatabase } from './database.js'
import { StatementNames } from './pg-prepared.js'

test('a text is named on its third use, keeps its name, and texts with many parameters never are', () => {
  const names = new StatementNames()
  assert.equal(names.nameFor('select $1', 1), undefined)
  assert.equal(names.nameFor('select $1', 1), undefined)
  const name = names.nameFor('select $1', 1)
  assert.match(name ?? '', /^tern_\d+$/)
  assert.equal(names.nameFor('select $1', 1), name)
  // another text gets another name
  for (let i = 0; i < 2; i++) names.nameFor('select $1 + 1', 1)
  const other = names.nameFor('select $1 + 1', 1)
  assert.ok(other && other !== name)
  for (let i = 0; i < 5; i++) assert.equal(names.nameFor('insert many', 33), undefined)
  assert.equal(names.size, 2)
})

test('at most 200 texts are named: later ones run unnamed, the named keep their names', () => {
  const names = new StatementNames()
  const first = [0, 1, 2].map(() => names.nameFor('text 0', 1))[2]
  for (let t = 1; t < 250; t++) for (let i = 0; i < 3; i++) names.nameFor(`text ${t}`, 1)
  assert.equal(names.size, 200)
  for (let i = 0; i < 3; i++) assert.equal(names.nameFor('text 999', 1), undefined)
  assert.equal(names.nameFor('text 0', 1), first)
})

test('on PostgreSQL a hot query runs as a prepared statement and still answers right', {
  skip: !testDatabaseUrl && 'PostgreSQL only (set TEST_DATABASE_URL)',
}, async () => {
  const database = await createTestDatabase(tempDir())
  const handle = createDatabase(database.url)
  try {
    const prepared = await handle.db.connection().execute(async (db) => {
      for (let i = 0; i < 5; i++) {
        const { rows } = await sql<{ v: number }>`select ${i}::int8 + 1 as v`.execute(db)
        assert.equal(rows[0].v, i + 1)
        const many = Array.from({ length: 40 }, (_, n) => n)
        const sum = await sql<{ v: number }>`select ${sql.join(
          many.map((n) => sql`${n}::int8`),
          sql` + `,
        )} as v`.execute(db)
        assert.equal(sum.rows[0].v, 780)
        await sql`select 1`.execute(db)
      }
      return (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map((row) => row.statement)
    })
    // the hot one-parameter query is prepared on this connection; the 40-parameter one and the one
    // without parameters are not
    assert.ok(prepared.includes('select $1::int8 + 1 as v'), `prepared: ${JSON.stringify(prepared)}`)
    assert.ok(!prepared.some((text) => text.includes('$40')))
    assert.ok(!prepared.includes('select 1'))
  } finally {
    await handle.close()
    await database.drop()
  }
})
