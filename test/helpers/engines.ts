import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { connectDb } from '../../src/core/db/connect.ts';
import { migrateToLatest } from '../../src/core/db/migrate.ts';

export type EngineName = 'sqlite' | 'postgres';

export interface EngineInfo {
  name: EngineName;
  /** Why the engine's tests are skipped on this machine, if they are. */
  skip?: string;
}

/** Admin connection used to create a fresh database per test file. */
export const PG_ADMIN_URL = process.env.TESSERA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let pgAvailable: Promise<string | undefined> | undefined;

/** Undefined when PostgreSQL answers; otherwise why not. In CI a missing PostgreSQL is a failure. */
export function postgresProblem(): Promise<string | undefined> {
  pgAvailable ??= (async () => {
    if (process.env.TESSERA_TEST_PG === 'off') return 'TESSERA_TEST_PG=off';
    const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('select 1');
      return undefined;
    } catch (error) {
      const reason = `PostgreSQL not reachable at ${PG_ADMIN_URL.replace(/\/\/[^@]*@/, '//')}: ${(error as Error).message}`;
      if (process.env.CI === 'true') throw new Error(`CI requires PostgreSQL. ${reason}`);
      return reason;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return pgAvailable;
}

export async function engines(): Promise<EngineInfo[]> {
  const problem = await postgresProblem();
  return [{ name: 'sqlite' }, problem ? { name: 'postgres', skip: problem } : { name: 'postgres' }];
}

/**
 * A fresh PostgreSQL database. With `migrated`, it is a copy of a template database that holds the
 * whole schema (CREATE DATABASE … TEMPLATE): migrating a new database on PostgreSQL costs about a second
 * of server and client CPU, and the suite makes hundreds of them.
 */
export async function createPgDatabase(options: { migrated?: boolean } = {}): Promise<{
  url: string;
  drop(): Promise<void>;
}> {
  const name = `tessera_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const template = options.migrated ? await migratedTemplate() : undefined;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(name),
    async drop() {
      const client = new pg.Client({ connectionString: PG_ADMIN_URL });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

function databaseUrl(name: string): string {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

let template: Promise<string> | undefined;

/**
 * The name of a template database migrated to the schema of this checkout, made once on this server by
 * whichever test process needs it first (an advisory lock keeps the others waiting) and kept between runs.
 * Its name is a hash of the migration sources, so a changed or added migration makes a new one, and a
 * template is only ever renamed into place once it is whole. Migrations seed nothing random, so a copy
 * equals a freshly migrated database.
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `tessera_tpl_${schemaHash()}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    try {
      await admin.query("select pg_advisory_lock(hashtext('tessera test template'))");
      const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
      if (found.rowCount === 0) {
        const building = `${name}_build`;
        await admin.query(`drop database if exists ${building} with (force)`);
        await admin.query(`create database ${building}`);
        const handle = connectDb({ kind: 'postgres', url: databaseUrl(building) }, { poolSize: 1 });
        try {
          await migrateToLatest(handle.db);
        } finally {
          await handle.close();
        }
        await admin.query(`alter database ${building} rename to ${name}`);
        await admin.query(`alter database ${name} is_template true`);
      }
      return name;
    } finally {
      await admin.query("select pg_advisory_unlock(hashtext('tessera test template'))").catch(() => {});
      await admin.end();
    }
  })();
  return template;
}

let schemaDigest: string | undefined;

/** A hash of the migration sources: the schema a migrated template holds. */
function schemaHash(): string {
  if (schemaDigest === undefined) {
    const dir = new URL('../../src/core/db/migrations/', import.meta.url);
    const hash = createHash('sha256');
    for (const file of readdirSync(dir).sort()) hash.update(file).update(readFileSync(new URL(file, dir)));
    schemaDigest = hash.digest('hex').slice(0, 16);
  }
  return schemaDigest;
}

let sqliteTemplate: Promise<string> | undefined;

/**
 * Puts a migrated SQLite database at `file` (which must not exist yet): a copy of a template file migrated
 * once per schema and kept in the temporary directory, made whole under another name and then renamed, so
 * test processes starting together never copy half a file.
 */
export async function copyMigratedSqlite(file: string): Promise<void> {
  sqliteTemplate ??= (async () => {
    const path = join(tmpdir(), `tessera-test-template-${schemaHash()}.sqlite`);
    if (!existsSync(path)) {
      const building = `${path}.${process.pid}.building`;
      rmSync(building, { force: true });
      const handle = connectDb({ kind: 'sqlite', file: building });
      try {
        await migrateToLatest(handle.db);
      } finally {
        await handle.close();
      }
      for (const suffix of ['-wal', '-shm']) rmSync(`${building}${suffix}`, { force: true });
      renameSync(building, path);
    }
    return path;
  })();
  copyFileSync(await sqliteTemplate, file);
}
