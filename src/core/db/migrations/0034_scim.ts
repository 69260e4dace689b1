import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 29, part 2: SCIM 2.0 provisioning (features/scim). What SCIM knows of a user or group
// beyond identity's own columns: the identity provider's `externalId`, and whether the provider
// deleted it (a deleted user stays in `users`, disabled, as identity keeps every user; SCIM then
// answers 404 for it).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('scim_resources')
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('deleted_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('scim_resources_pk', ['resource_type', 'resource_id'])
    .execute();
  await db.schema
    .createIndex('scim_resources_external_idx')
    .on('scim_resources')
    .columns(['org_id', 'resource_type', 'external_id'])
    .execute();
  await db.schema
    .createIndex('scim_resources_deleted_idx')
    .on('scim_resources')
    .columns(['org_id', 'resource_type', 'deleted_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('scim_resources').execute();
}
