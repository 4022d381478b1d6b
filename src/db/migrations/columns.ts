/**
 * Column helpers: the only dialect branches in migrations. APPEND-ONLY: a landed migration calls
 * these, so changing one would silently rewrite history. Need something different? Add `id2()`.
 */
import { sql, type CreateTableBuilder, type Kysely } from 'kysely'

export type Dialect = 'sqlite' | 'postgres'

/** Integer primary key: SQLite autoincrement, PostgreSQL bigint identity. */
export function id<T extends string, C extends string>(table: CreateTableBuilder<T, C>, dialect: Dialect, name = 'id') {
  return dialect === 'sqlite'
    ? table.addColumn(name, 'integer', (c) => c.primaryKey().autoIncrement())
    : table.addColumn(name, 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
}

/** Integer reference to another table's id (bigint in PostgreSQL). */
export function ref(dialect: Dialect) {
  return dialect === 'sqlite' ? ('integer' as const) : ('bigint' as const)
}

/** Epoch milliseconds. */
export const timestamp = 'bigint' as const

/** Boolean as 0/1 in both dialects. */
export const flag = 'integer' as const

/** JSON document: text in SQLite, jsonb in PostgreSQL. */
export function json(dialect: Dialect) {
  return dialect === 'sqlite' ? ('text' as const) : ('jsonb' as const)
}

/** Which dialect a migration is running on. */
export function dialectOf(db: Kysely<any>): Dialect {
  const name = db.getExecutor().adapter.constructor.name
  return name.startsWith('Postgres') ? 'postgres' : 'sqlite'
}

/** A unique index on lower(column): case-insensitive uniqueness in both dialects. */
export function uniqueLower(db: Kysely<any>, index: string, table: string, column: string) {
  return db.schema.createIndex(index).unique().on(table).expression(sql`lower(${sql.ref(column)})`).execute()
}
