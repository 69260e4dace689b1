import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 24, items 5 and 8. A webhook endpoint may authenticate Tessera to its receiver, as the
// reference documents: HTTP Basic or a custom header with a secret value (`target_auth`: JSON
// {type, username | headerName}; the password or header value apart in `target_auth_secret`,
// encrypted with the keyring). `payload_format` picks the delivered body: `standard` (the
// reference's webhook envelope) or `legacy` (the reference's older event-feed record).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('target_auth', 'text').execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('target_auth_secret', 'text').execute();
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('payload_format', 'text', (c) => c.notNull().defaultTo('standard'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').dropColumn('payload_format').execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('target_auth_secret').execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('target_auth').execute();
}
