import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Never edit after it lands: add a new migration instead.
//
// The identity revision (src/core/db/revision.ts): a one-row counter that triggers bump whenever a
// row that can change a principal or a permission decision changes, so that every instance can
// keep resolved principals in memory and drop them the moment one may be stale. A later
// migration that adds such a table (or, on SQLite, a column to api_keys / auth_sessions) calls
// `identityRevisionTriggers` for it.

/** Columns whose changes never alter a principal (per-request bookkeeping); updates of only these do not bump. */
export const VOLATILE_COLUMNS: Record<string, readonly string[]> = {
  auth_sessions: ['last_used_at'],
  api_keys: ['last_used_at'],
};

/** Which writes bump, per table. Inserts matter only where a new row widens or narrows an existing caller. */
export const IDENTITY_TRIGGERS: Record<string, readonly ('insert' | 'update' | 'delete')[]> = {
  organizations: ['update', 'delete'],
  users: ['update', 'delete'],
  roles: ['update', 'delete'],
  groups: ['update', 'delete'],
  user_groups: ['insert', 'update', 'delete'],
  security_templates: ['update', 'delete'],
  security_template_grants: ['insert', 'update', 'delete'],
  auth_sessions: ['update', 'delete'],
  api_keys: ['update', 'delete'],
  auth_signing_keys: ['update', 'delete'],
  oauth_clients: ['update', 'delete'],
};

function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Creates (or re-creates) the revision triggers of one table, on either engine. */
export async function identityRevisionTriggers(
  db: Kysely<any>,
  table: string,
  events: readonly ('insert' | 'update' | 'delete')[],
  volatile: readonly string[] = [],
): Promise<void> {
  const id = (s: string) => sql.id(s);
  if (isPostgres(db)) {
    for (const event of events) {
      const name = `tessera_rev_${table}_${event}`;
      await sql`drop trigger if exists ${id(name)} on ${id(table)}`.execute(db);
      // Deferred to commit: the counter row is locked only while the transaction commits, so
      // writers never wait on it while holding other locks (no deadlocks), and a NOTIFY can never
      // announce a change that is not yet visible.
      const when =
        event === 'update'
          ? volatile.length > 0
            ? sql`when ((to_jsonb(old) - ${sql.raw(`array[${volatile.map((c) => `'${c}'`).join(',')}]`)}) is distinct from (to_jsonb(new) - ${sql.raw(`array[${volatile.map((c) => `'${c}'`).join(',')}]`)}))`
            : sql`when (old.* is distinct from new.*)`
          : sql``;
      await sql`create constraint trigger ${id(name)} after ${sql.raw(event)} on ${id(table)} deferrable initially deferred for each row ${when} execute function tessera_bump_revision()`.execute(
        db,
      );
    }
    return;
  }
  for (const event of events) {
    const name = `tessera_rev_${table}_${event}`;
    await sql`drop trigger if exists ${id(name)}`.execute(db);
    await sql`drop trigger if exists ${id(`${name}_also`)}`.execute(db);
    const bump = sql.raw('begin update tessera_revision set value = value + 1 where id = 1; end');
    if (event !== 'update' || volatile.length === 0) {
      await sql`create trigger ${id(name)} after ${sql.raw(event)} on ${id(table)} for each row ${bump}`.execute(db);
      continue;
    }
    // Any update that leaves the volatile columns alone bumps (whatever columns it sets, including
    // ones added later); an update that also moves a volatile column bumps when it names any other
    // column known now.
    const same = sql.raw(volatile.map((c) => `old."${c}" is new."${c}"`).join(' and '));
    await sql`create trigger ${id(name)} after update on ${id(table)} for each row when ${same} ${bump}`.execute(db);
    const columns = (await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db)).rows
      .map((r) => r.name)
      .filter((c) => !volatile.includes(c));
    await sql`create trigger ${id(`${name}_also`)} after update of ${sql.join(columns.map((c) => id(c)))} on ${id(table)} for each row when not (${same}) ${bump}`.execute(
      db,
    );
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tessera_revision')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('value', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('tessera_revision').values({ id: 1, value: 0 }).execute();
  if (isPostgres(db)) {
    // Once per transaction, however many rows it touched: one counter update and one NOTIFY.
    await sql`
      create or replace function tessera_bump_revision() returns trigger language plpgsql as $$
      declare v bigint;
      begin
        if current_setting('tessera.revision_bumped', true) = txid_current()::text then return null; end if;
        perform set_config('tessera.revision_bumped', txid_current()::text, true);
        update tessera_revision set value = value + 1 where id = 1 returning value into v;
        perform pg_notify('tessera_revision', v::text);
        return null;
      end $$`.execute(db);
  }
  for (const [table, events] of Object.entries(IDENTITY_TRIGGERS)) {
    await identityRevisionTriggers(db, table, events, VOLATILE_COLUMNS[table] ?? []);
  }
}
