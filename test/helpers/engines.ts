import pg from 'pg';

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

export async function createPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `tessera_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
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
