import { sql, type Kysely } from 'kysely';

/**
 * Organization names are unique, ignoring case (the CLI and `--org NAME` look them up by name).
 * Names that already repeat keep the oldest as is; the others get their customer id appended.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const rows = await db
    .selectFrom('organizations')
    .select(['id', 'name', 'customer_id', 'created_at'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const seen = new Set<string>();
  for (const row of rows as { id: string; name: string; customer_id: string }[]) {
    const key = row.name.toLowerCase();
    if (!seen.has(key)) {
      seen.add(key);
      continue;
    }
    const renamed = `${row.name} (${row.customer_id})`;
    seen.add(renamed.toLowerCase());
    await db.updateTable('organizations').set({ name: renamed }).where('id', '=', row.id).execute();
  }
  await db.schema
    .createIndex('organizations_name_unique')
    .on('organizations')
    .unique()
    .expression(sql`lower(name)`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('organizations_name_unique').execute();
}
