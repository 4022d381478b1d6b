/**
 * Automatic prepared statements on PostgreSQL. Kysely runs every query as an unnamed statement,
 * which PostgreSQL parses and plans afresh each time: for the hot ones (a socket request's session
 * lookup, the send batch's statements over arrays) planning cost more than running them (measured
 * with pg_stat_statements on send-pg: the session lookup spent 0.12 ms planning and 0.02 ms
 * executing per call).
 *
 * A parameterised SQL text seen MIN_USES times in this process gets a name; from then on each
 * pooled connection parses it once (pg keeps which names a connection has parsed) and later runs
 * only bind and execute, and PostgreSQL may keep a generic plan for it. Same text, same name, on
 * every connection. Texts without parameters (BEGIN, COMMIT, migrations' multi-statement scripts)
 * stay on the simple protocol, and so do texts with many (see MAX_PARAMETERS). At most MAX_NAMED
 * texts are named, so texts that vary with their input cannot grow the connections' statement
 * lists without bound; the first texts to reach MIN_USES are the hot ones.
 *
 * A statement prepared before a schema change is re-planned by PostgreSQL on its next run; only
 * a change of a `select *`'s columns under a running server would fail it ("cached plan must not
 * change result type"), and the schema only changes at start-up, before queries run.
 */
import pg from 'pg'

/** uses before a text is named: one-off texts (a start-up query, an odd list length) stay unnamed */
const MIN_USES = 3
/** named texts at most, per process (each connection holds those it has run, with their plans) */
const MAX_NAMED = 200
/**
 * texts with more parameters stay unnamed: those are the ones whose text varies with their input
 * (a multi-row insert, an `in (…)` list), where one name per row count would crowd out the rest
 */
const MAX_PARAMETERS = 32
/** texts counted at most before the count starts over (bounds the memory of one-off texts) */
const MAX_COUNTED = 5_000

export class StatementNames {
  private readonly names = new Map<string, string>()
  private readonly uses = new Map<string, number>()

  /** The name to run this text under, or undefined to run it unnamed (for now). */
  nameFor(text: string, parameters: number): string | undefined {
    if (parameters > MAX_PARAMETERS) return undefined
    const known = this.names.get(text)
    if (known !== undefined || this.names.size >= MAX_NAMED) return known
    const used = (this.uses.get(text) ?? 0) + 1
    if (used < MIN_USES) {
      if (this.uses.size >= MAX_COUNTED) this.uses.clear()
      this.uses.set(text, used)
      return undefined
    }
    this.uses.delete(text)
    const name = `tern_${this.names.size + 1}`
    this.names.set(text, name)
    return name
  }

  get size() {
    return this.names.size
  }
}

/**
 * A pg Client class whose `query(text, values)` runs as a named statement once the text is hot.
 * Given to pg.Pool as its `Client`; every other way of calling query is passed through unchanged.
 */
export function namingClient(names: StatementNames): typeof pg.Client {
  return class NamingClient extends pg.Client {
    // pg's query has a dozen overloads; this one forwards the call as it came, renamed or not
    // biome-ignore lint/suspicious/noExplicitAny: one signature standing for all of pg's overloads, forwarded unchanged
    override query(config: any, values?: any, callback?: any): any {
      if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
        const name = names.nameFor(config, values.length)
        if (name !== undefined) return super.query({ name, text: config, values }, callback)
      }
      return super.query(config, values, callback)
    }
  }
}
