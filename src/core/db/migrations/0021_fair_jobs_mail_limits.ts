import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 23, defect 7. The job claim reads, per organization with due jobs, how many it has running
// and when it was last served (its recent non-pending jobs): an index by organization and time.
// Share mail is rate-limited per sender and per organization: the outbox records who queued a mail
// (null for system mail), and counting an hour of mails is an index range.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('jobs_org_served_idx').on('jobs').columns(['org_id', 'updated_at']).execute();
  await db.schema.alterTable('mail_outbox').addColumn('sender_id', 'text').execute();
  await db.schema
    .createIndex('mail_outbox_org_created_idx')
    .on('mail_outbox')
    .columns(['org_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('mail_outbox_sender_created_idx')
    .on('mail_outbox')
    .columns(['sender_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('mail_outbox_sender_created_idx').execute();
  await db.schema.dropIndex('mail_outbox_org_created_idx').execute();
  await db.schema.alterTable('mail_outbox').dropColumn('sender_id').execute();
  await db.schema.dropIndex('jobs_org_served_idx').execute();
}
