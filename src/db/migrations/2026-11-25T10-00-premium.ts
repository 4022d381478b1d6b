import { sql, type Kysely } from 'kysely'
import { dialectOf, flag, id, ref, timestamp, uniqueLower } from './columns.js'

/**
 * Premium purchases: each user's subscription (since when, which plan, paid how, renewing or not;
 * the expiry itself stays on users, where every Peer reads it), orders that go through a payment
 * provider (pending → paid | failed | refunded; amounts in kopecks; an Idempotency-Key makes a
 * retried activation one order), promo codes and who redeemed which (once per user).
 *
 * premium_orders gains its purchase columns, and premium_until may be null (a pending order has
 * taken nobody anywhere yet): PostgreSQL alters the table; SQLite, which cannot drop a NOT NULL,
 * rebuilds it. Until now it held only referral rewards, all paid, of amount 0 (so whole roubles and
 * kopecks agree).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const d = dialectOf(db)
  await db.schema
    .createTable('premium_subscriptions')
    .addColumn('user_id', ref(d), (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('premium_since', timestamp)
    .addColumn('plan', 'text')
    .addColumn('payment_method', 'text')
    .addColumn('auto_renew', flag, (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute()
  // the renewal job's scan: who renews, by expiry (on users)
  await db.schema.createIndex('premium_subscriptions_renewing').on('premium_subscriptions').column('user_id').where(sql.ref('auto_renew'), '=', 1).execute()

  await id(db.schema.createTable('premium_promos'), d)
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('discount_percent', 'integer', (c) => c.notNull().check(sql`discount_percent between 1 and 100`))
    .addColumn('max_uses', 'integer', (c) => c.notNull().check(sql`max_uses >= 1`))
    .addColumn('used_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', timestamp)
    .addColumn('is_active', flag, (c) => c.notNull().defaultTo(1))
    .addColumn('created_by', ref(d), (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addCheckConstraint('premium_promos_uses', sql`used_count between 0 and max_uses`)
    .execute()
  await uniqueLower(db, 'premium_promos_code', 'premium_promos', 'code')

  const orderColumns = (table: any) =>
    table
      .addColumn('user_id', ref(d), (c: any) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('plan', 'text', (c: any) => c.notNull())
      // kopecks
      .addColumn('amount', 'integer', (c: any) => c.notNull().check(sql`amount >= 0`))
      .addColumn('currency', 'text', (c: any) => c.notNull())
      .addColumn('status', 'text', (c: any) => c.notNull().check(sql`status in ('pending', 'paid', 'failed', 'refunded')`))
      .addColumn('provider', 'text', (c: any) => c.notNull())
      // the premium_expires_at paying the order took the user to
      .addColumn('premium_until', timestamp)
      .addColumn('created_at', timestamp, (c: any) => c.notNull())
      .addColumn('kind', 'text', (c: any) => c.notNull().defaultTo('purchase'))
      .addColumn('months', 'integer', (c: any) => c.notNull().defaultTo(0))
      .addColumn('payment_method', 'text')
      .addColumn('promo_id', ref(d), (c: any) => c.references('premium_promos.id').onDelete('set null'))
      .addColumn('idempotency_key', 'text')
      .addColumn('provider_ref', 'text')
      .addColumn('paid_at', timestamp)
  if (d === 'sqlite') {
    await orderColumns(id(db.schema.createTable('premium_orders_new'), d)).execute()
    await sql`insert into premium_orders_new (id, user_id, plan, amount, currency, status, provider, premium_until, created_at, kind, paid_at)
      select id, user_id, plan, amount, currency, status, provider, premium_until, created_at,
        case when provider = 'referral' then 'referral' else 'purchase' end, created_at from premium_orders`.execute(db)
    await db.schema.dropTable('premium_orders').execute()
    await sql`alter table premium_orders_new rename to premium_orders`.execute(db)
    await db.schema.createIndex('premium_orders_user').on('premium_orders').columns(['user_id', 'id']).execute()
  } else {
    await sql`alter table premium_orders alter column premium_until drop not null`.execute(db)
    await sql`alter table premium_orders add constraint premium_orders_amount check (amount >= 0)`.execute(db)
    await sql`alter table premium_orders add constraint premium_orders_status check (status in ('pending', 'paid', 'failed', 'refunded'))`.execute(db)
    await sql`alter table premium_orders add column kind text not null default 'purchase', add column months integer not null default 0,
      add column payment_method text, add column promo_id bigint references premium_promos (id) on delete set null,
      add column idempotency_key text, add column provider_ref text, add column paid_at bigint`.execute(db)
    await sql`update premium_orders set kind = 'referral', paid_at = created_at where provider = 'referral'`.execute(db)
  }
  await db.schema.createIndex('premium_orders_idempotency').unique().on('premium_orders').columns(['user_id', 'idempotency_key']).where(sql.ref('idempotency_key'), 'is not', null).execute()
  // pending orders (the manual provider's queue, the renewal job's "already asked")
  await db.schema.createIndex('premium_orders_pending').on('premium_orders').columns(['user_id', 'kind']).where(sql.ref('status'), '=', 'pending').execute()

  await db.schema
    .createTable('premium_promo_redemptions')
    .addColumn('promo_id', ref(d), (c) => c.notNull().references('premium_promos.id').onDelete('cascade'))
    .addColumn('user_id', ref(d), (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('order_id', ref(d), (c) => c.references('premium_orders.id').onDelete('set null'))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('premium_promo_redemptions_pk', ['promo_id', 'user_id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('premium_promo_redemptions').execute()
  await db.schema.dropIndex('premium_orders_pending').execute()
  await db.schema.dropIndex('premium_orders_idempotency').execute()
  for (const column of ['kind', 'months', 'payment_method', 'promo_id', 'idempotency_key', 'provider_ref', 'paid_at']) {
    await db.schema.alterTable('premium_orders').dropColumn(column).execute()
  }
  await db.schema.dropTable('premium_promos').execute()
  await db.schema.dropTable('premium_subscriptions').execute()
}
