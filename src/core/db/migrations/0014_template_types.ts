import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
// Template types: an action-type metadata template is also a DAM object ("template-as-asset",
// objectType Action) made by a job; the template remembers that object's id once it exists.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('metadata_templates').addColumn('action_object_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('metadata_templates').dropColumn('action_object_id').execute();
}
