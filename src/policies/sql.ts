/**
 * How a policy is written for queries: as a Kysely expression over operands that are column
 * references, bound values or positional placeholders. The same expression goes into a Kysely
 * query (`.where(expr)`) and, rendered once to text by `sqlText`, into the hand-written statements
 * of the send fast paths, so a rule is spelled in one place whatever runs it.
 */
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql, type Expression, type RawBuilder } from 'kysely'

/** A value a policy compares: a column (`col('u.id')`), a bound number, or an expression. */
export type Operand = number | Expression<unknown>

/** A column reference, `alias.column`. */
export const col = (reference: string): RawBuilder<unknown> => sql.ref(reference)

/** A positional parameter (`?` on SQLite) inside a statement written by hand. */
export const placeholder: RawBuilder<unknown> = sql.raw('?')

/** The operand as an expression: numbers are bound as parameters. */
export const operand = (value: Operand): Expression<unknown> => (typeof value === 'number' ? sql.val(value) : value)

/**
 * A compiler that never runs a query: it only renders. Identifiers come out double-quoted, which
 * SQLite and PostgreSQL read alike, so the text serves both dialects.
 */
const renderer = new Kysely<never>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
})

/**
 * A policy expression as SQL text, for statements written by hand. Its operands must be columns or
 * placeholders: a bound value would need a parameter list the caller does not have.
 */
export function sqlText(expression: Expression<unknown>): string {
  const compiled = sql`${expression}`.compile(renderer)
  if (compiled.parameters.length)
    throw new Error(`sqlText: the expression binds ${compiled.parameters.length} value(s); use col() or placeholder`)
  return compiled.sql
}
