import type { Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 28, item 0: idempotent multipart completion. Before a completion moves the assembled
// bytes to their content address, it records what they are ({size, sha256, contentType}) on the
// upload, so a completion repeated after a crash (the S3 multipart upload already completed, the
// bytes already moved) finishes the upload with them instead of failing and orphaning them.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('asset_uploads').addColumn('assembled', 'text').execute();
}
