import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// Issue 29, item 1: the audit trail becomes a tamper-evident record (features/audit).
// - Every row says from where and through what it was made (operation = the route's operationId,
//   the API key or OAuth client of the credential, user agent, request id).
// - Rows are chained per organization: `seq` (1, 2, 3 … per organization, unique) and
//   `hash = sha256(prev_hash ‖ canonical row)`. Writers only insert (in the transaction of the
//   change); the chain is sealed after commit, one organization at a time, under the lock of its
//   row in `audit_heads` (features/audit/chain/chain.ts). Rows written before this migration have no
//   seq and are sealed like new ones.
// - A sealed row cannot be updated (a trigger on both engines); retention deletes the oldest rows
//   and records where the chain now starts (`audit_heads.anchor_seq`, `anchor_hash`).
// - `audit_objects`: every object a row names (an asset's history, the object filter).
// - The Administrator role of existing organizations gets the new Audit Log privilege.
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const column of [
    'prev_hash',
    'hash',
    'operation',
    'api_key_id',
    'oauth_client_id',
    'user_agent',
    'request_id',
    'via',
  ]) {
    await db.schema.alterTable('audit_log').addColumn(column, 'text').execute();
  }
  await db.schema.alterTable('audit_log').addColumn('seq', 'bigint').execute();
  await sql`create unique index audit_log_org_seq_idx on audit_log (org_id, seq)`.execute(db);
  await sql`create index audit_log_unsealed_idx on audit_log (org_id, at, id) where seq is null`.execute(db);
  await sql`create index audit_log_org_actor_idx on audit_log (org_id, actor_id, seq)`.execute(db);

  await sql`create table audit_objects (audit_id text not null, org_id text not null, object_id text not null, object_type text not null, primary key (audit_id, object_id))`.execute(
    db,
  );
  await sql`create index audit_objects_object_idx on audit_objects (org_id, object_id)`.execute(db);
  await sql`insert into audit_objects (audit_id, org_id, object_id, object_type) select id, org_id, target_id, target_type from audit_log where target_id is not null`.execute(
    db,
  );

  await sql`create table audit_heads (org_id text primary key, seq bigint not null, hash text not null, anchor_seq bigint not null, anchor_hash text not null, anchor_at bigint)`.execute(
    db,
  );

  if (postgres) {
    await sql`create function tessera_audit_append_only() returns trigger language plpgsql as $$
      begin
        if old.seq is not null then raise exception 'audit_log rows are append-only (sealed row %)', old.id; end if;
        return new;
      end $$`.execute(db);
    await sql`create trigger tessera_audit_append_only before update on audit_log for each row execute function tessera_audit_append_only()`.execute(
      db,
    );
  } else {
    await sql`create trigger tessera_audit_append_only before update on audit_log for each row when old.seq is not null
      begin select raise(abort, 'audit_log rows are append-only'); end`.execute(db);
  }

  const admins = await db
    .selectFrom('roles')
    .select(['id', 'privileges'])
    .where('name_key', '=', 'administrator')
    .execute();
  for (const role of admins as { id: string; privileges: string }[]) {
    const privileges = JSON.parse(role.privileges) as string[];
    if (!Array.isArray(privileges) || privileges.includes('audit_log') || !privileges.includes('role_management'))
      continue;
    await db
      .updateTable('roles')
      .set({ privileges: JSON.stringify([...privileges, 'audit_log']) })
      .where('id', '=', role.id)
      .execute();
  }
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only');
}
