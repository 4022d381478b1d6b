import { sql, type Kysely } from 'kysely'
import { dialectOf, id, ref, timestamp } from './columns.js'

/**
 * Global search over users (username and display name, case-insensitive) served by an index in
 * both dialects, and each user's recent searches.
 *
 * Raw SQL, per dialect: SQLite keeps an FTS5 trigram index (`users_search`, external content kept
 * in step with `users` by triggers) for substrings of 3 characters or more, and expression indexes
 * on lower() for 2-character prefixes; PostgreSQL keeps pg_trgm GIN indexes for substrings and
 * text_pattern_ops indexes for prefixes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  if (d === 'sqlite') {
    await sql`create virtual table users_search using fts5(username, display_name, content='users', content_rowid='id', tokenize='trigram')`.execute(db)
    await sql`insert into users_search(users_search) values ('rebuild')`.execute(db)
    await sql`create trigger users_search_insert after insert on users begin
      insert into users_search(rowid, username, display_name) values (new.id, new.username, new.display_name);
    end`.execute(db)
    await sql`create trigger users_search_delete after delete on users begin
      insert into users_search(users_search, rowid, username, display_name) values ('delete', old.id, old.username, old.display_name);
    end`.execute(db)
    await sql`create trigger users_search_update after update of username, display_name on users begin
      insert into users_search(users_search, rowid, username, display_name) values ('delete', old.id, old.username, old.display_name);
      insert into users_search(rowid, username, display_name) values (new.id, new.username, new.display_name);
    end`.execute(db)
    // lower(username) is indexed already (users_username_lower)
    await sql`create index users_display_name_lower on users (lower(display_name))`.execute(db)
  } else {
    await sql`create extension if not exists pg_trgm`.execute(db)
    await sql`create index users_username_trgm on users using gin (lower(username) gin_trgm_ops)`.execute(db)
    await sql`create index users_display_name_trgm on users using gin (lower(display_name) gin_trgm_ops)`.execute(db)
    await sql`create index users_username_prefix on users (lower(username) text_pattern_ops)`.execute(db)
    await sql`create index users_display_name_prefix on users (lower(display_name) text_pattern_ops)`.execute(db)
  }

  await id(db.schema.createTable('recent_searches'), d)
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('search_query', 'text', (c) => c.notNull())
    .addColumn('search_type', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('recent_searches_unique').unique().on('recent_searches').columns(['user_id', 'search_type', 'search_query']).execute()
  await db.schema.createIndex('recent_searches_user_time').on('recent_searches').columns(['user_id', 'created_at']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('recent_searches').execute()
  if (dialectOf(db) === 'sqlite') {
    for (const trigger of ['users_search_insert', 'users_search_delete', 'users_search_update']) await sql`drop trigger ${sql.raw(trigger)}`.execute(db)
    await sql`drop table users_search`.execute(db)
    await sql`drop index users_display_name_lower`.execute(db)
  } else {
    for (const index of ['users_username_trgm', 'users_display_name_trgm', 'users_username_prefix', 'users_display_name_prefix']) {
      await sql`drop index ${sql.raw(index)}`.execute(db)
    }
  }
}
