import { sql, type Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Recycle bin: who deleted an asset, and a partial index so listing an organization's recycle bin
// (newest deletion first) reads only deleted current versions.
// Mail outbox: mails are written here in the transaction of the change that wants them sent, and
// delivered by the `mail.send` job with retries, so an SMTP outage delays a mail but never loses it.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('assets').addColumn('deleted_by', 'text').execute();
  await sql`create index assets_recycle_bin_idx on assets (org_id, deleted_at desc, id desc) where deleted_at is not null and is_current = 1`.execute(
    db,
  );

  await db.schema
    .createTable('mail_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text')
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
  await db.schema.createIndex('mail_outbox_org_idx').on('mail_outbox').columns(['org_id', 'created_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
