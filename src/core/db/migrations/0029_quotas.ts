import { sql, type Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 29, part 3: quotas and limits (features/quotas, docs/quotas.md).
// - org_quotas: an organization's own limits; a null column follows the server default
//   (TESSERA_QUOTA_*), 0 is "no limit".
// - org_usage: what an organization holds (bytes of stored content, assets), moved in the same
//   transaction as the asset change by one conditional UPDATE, which is what makes the storage and
//   asset-count checks atomic across processes. Filled here from the assets table.
// - quota_windows: fixed-window counters (uploads per user per hour, API requests per key per
//   minute), one row per subject and window, incremented by an upsert that refuses past the limit.
// - The Administrator roles get the new Quota Management privilege (as 0024 gave Audit Log).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('org_quotas')
    .addColumn('org_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('storage_bytes', 'bigint')
    .addColumn('assets', 'bigint')
    .addColumn('uploads_per_user_per_hour', 'bigint')
    .addColumn('share_mail_per_hour', 'bigint')
    .addColumn('api_requests_per_key_per_minute', 'bigint')
    .addColumn('updated_by', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('org_usage')
    .addColumn('org_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('storage_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('assets', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('quota_windows')
    .addColumn('quota', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('quota_windows_pk', ['quota', 'subject', 'window_start'])
    .execute();
  await db.schema
    .createIndex('quota_windows_org_idx')
    .on('quota_windows')
    .columns(['org_id', 'quota', 'window_start'])
    .execute();

  // What each organization holds today: stored (not federated) content of every version, recycle
  // bin included; assets are version chains of ordinary assets (Action objects are the system's).
  const now = Date.now();
  await sql`insert into org_usage (org_id, storage_bytes, assets, updated_at)
    select o.id,
      coalesce((select sum(a.size) from assets a where a.org_id = o.id and a.content_state = 'available' and a.federated = 0 and a.size is not null), 0),
      (select count(*) from assets a where a.org_id = o.id and a.is_current = 1 and a.object_type = 'Asset'),
      ${now}
    from organizations o`.execute(db);

  const admins = await db
    .selectFrom('roles')
    .select(['id', 'privileges'])
    .where('name_key', '=', 'administrator')
    .execute();
  for (const role of admins as { id: string; privileges: string }[]) {
    const privileges = JSON.parse(role.privileges) as string[];
    if (
      !Array.isArray(privileges) ||
      privileges.includes('quota_management') ||
      !privileges.includes('role_management')
    )
      continue;
    await db
      .updateTable('roles')
      .set({ privileges: JSON.stringify([...privileges, 'quota_management']) })
      .where('id', '=', role.id)
      .execute();
  }
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
