// API key verification cost, in-process (app.inject, no sockets), on SQLite and PostgreSQL:
// GET /v1/user authenticated by an X-API-Key next to the same route with a principal that costs
// nothing to resolve (the baseline) and with a user loaded from the database by id (what an
// access-token resolver does once the JWT checks out). Then a flood of malformed keys, counting
// database queries (there must be none for a bad checksum).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { KyselyPlugin } from 'kysely';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config.ts';
import { createDeps, type Deps } from '../src/deps.ts';
import type { Principal } from '../src/core/authz/principal.ts';
import { migrateToLatest } from '../src/core/db/migrate.ts';
import { generateKey, verifyApiKey } from '../src/features/api-keys/index.ts';
import { createApiKey } from '../src/features/api-keys/api-keys.service.ts';
import { createOrganization, loadUserPrincipal } from '../src/features/identity/index.ts';
import { seedOrganizationMetadata } from '../src/features/metadata/index.ts';
import { createPgDatabase, postgresProblem } from '../test/helpers/engines.ts';
import { fmt, measure, percentile, printTable } from './lib.ts';

const ROUNDS = 10;
const PER_ROUND = 1000;
const FLOOD = 20_000;

// Counted on results, which every executed query produces (precompiled ones included).
let queries = 0;
const countQueries: KyselyPlugin = {
  transformQuery: (args) => args.node,
  transformResult: async (args) => {
    queries += 1;
    return args.result;
  },
};

/** A key whose last character is changed: right prefix, length and alphabet, wrong checksum. */
function badChecksum(): string {
  const key = generateKey();
  return key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');
}

async function run(
  engine: 'sqlite' | 'postgres',
  rows: (string | number)[][],
  floodRows: (string | number)[][],
): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-bench-'));
  const pg = engine === 'postgres' ? await createPgDatabase() : undefined;
  const config = parseConfig({
    TESSERA_DATA_DIR: dataDir,
    TESSERA_LOG_LEVEL: 'silent',
    TESSERA_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
    ...(pg ? { DATABASE_URL: pg.url } : {}),
  });
  const base = createDeps(config);
  await migrateToLatest(base.db);
  const deps: Deps = { ...base, db: base.db.withPlugin(countQueries) };

  const now = deps.clock.now();
  const org = await deps.db.transaction().execute((trx) =>
    createOrganization(
      trx,
      now,
      {
        name: 'Bench',
        admin: { username: `bench-${now}`, email: 'bench@example.test', passwordHash: null },
      },
      seedOrganizationMetadata,
    ),
  );
  const admin = (await loadUserPrincipal(deps.db, org.adminUserId))!;
  const { key } = await createApiKey(deps, admin, { name: 'bench', roleId: org.roles.editor }, '127.0.0.1');

  // Baseline resolvers, bench-only: a principal already in memory, and a user loaded by id.
  const keyPrincipal = (await verifyApiKey(deps, key, '127.0.0.1'))!;
  const inMemory = async (request: FastifyRequest): Promise<Principal | null> => {
    const which = request.headers['x-bench-principal'];
    return which === 'admin' ? admin : which === 'key' ? keyPrincipal : null;
  };
  const byUserId = async (request: FastifyRequest): Promise<Principal | null> => {
    const id = request.headers['x-bench-user'];
    return typeof id === 'string' ? loadUserPrincipal(deps.db, id) : null;
  };
  const app = await buildApp(deps, { extraResolvers: [inMemory, byUserId] });

  // Each credential is compared with the same route run for the same principal held in memory,
  // so the difference is the cost of resolving the credential and nothing else.
  const scenarios: { name: string; url: string; headers: Record<string, string>; status: number; baseline?: string }[] =
    [
      { name: 'GET /healthz (public, no credentials)', url: '/healthz', headers: {}, status: 200 },
      {
        name: 'GET /v1/user as a user, principal in memory (baseline)',
        url: '/v1/user',
        headers: { 'x-bench-principal': 'admin' },
        status: 200,
      },
      {
        name: 'GET /v1/user as a user loaded by id (token-resolver equivalent)',
        url: '/v1/user',
        headers: { 'x-bench-user': org.adminUserId },
        status: 200,
        baseline: 'admin',
      },
      {
        name: 'GET /v1/user as the key, principal in memory (baseline)',
        url: '/v1/user',
        headers: { 'x-bench-principal': 'key' },
        status: 200,
      },
      {
        name: 'GET /v1/user with X-API-Key',
        url: '/v1/user',
        headers: { 'x-api-key': key },
        status: 200,
        baseline: 'key',
      },
      {
        name: 'GET /v1/user, X-API-Key with bad checksum (401)',
        url: '/v1/user',
        headers: { 'x-api-key': badChecksum() },
        status: 401,
      },
    ];
  const times = new Map<string, number[]>(scenarios.map((s) => [s.name, []]));
  const perRequestQueries = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of scenarios) {
      const before = queries;
      const t = await measure(
        PER_ROUND,
        async () => {
          const res = await app.inject({ method: 'GET', url: s.url, headers: s.headers });
          if (res.statusCode !== s.status) throw new Error(`${s.name}: ${res.statusCode} ${res.body}`);
        },
        { warmup: round === 0 ? 500 : 0 },
      );
      if (round === ROUNDS - 1) perRequestQueries.set(s.name, (queries - before) / PER_ROUND);
      times.get(s.name)!.push(...t);
    }
  }
  const percentiles = (name: string) => {
    const t = times.get(scenarios.find((s) => s.headers['x-bench-principal'] === name)!.name)!;
    return [percentile(t, 50), percentile(t, 99)] as const;
  };
  for (const s of scenarios) {
    const t = times.get(s.name)!;
    const [p50, p90, p99] = [percentile(t, 50), percentile(t, 90), percentile(t, 99)];
    const added = s.baseline
      ? [fmt(p50 - percentiles(s.baseline)[0], 3), fmt(p99 - percentiles(s.baseline)[1], 3)]
      : ['—', '—'];
    rows.push([
      engine,
      s.name,
      t.length,
      fmt(p50, 3),
      fmt(p90, 3),
      fmt(p99, 3),
      ...added,
      perRequestQueries.get(s.name)!,
    ]);
  }

  // verifyApiKey alone: checksum, HMAC, one indexed lookup, principal.
  const direct = await measure(ROUNDS * PER_ROUND, async () => verifyApiKey(deps, key, '127.0.0.1'), { warmup: 500 });
  rows.push([
    engine,
    'verifyApiKey() alone (no HTTP; its cost is what a key adds)',
    direct.length,
    fmt(percentile(direct, 50), 3),
    fmt(percentile(direct, 90), 3),
    fmt(percentile(direct, 99), 3),
    '—',
    '—',
    1,
  ]);

  // Floods, 64 requests in flight: malformed keys never reach the database.
  for (const [name, makeKey] of [
    ['bad checksum', badChecksum],
    ['well-formed, unknown', generateKey],
  ] as const) {
    const keys = Array.from({ length: FLOOD }, makeKey);
    const before = queries;
    const started = performance.now();
    const t = await measure(
      FLOOD,
      async (i) => {
        const res = await app.inject({
          method: 'GET',
          url: '/v1/user',
          headers: { 'x-api-key': keys[Math.max(0, i)]! },
        });
        if (res.statusCode !== 401) throw new Error(`flood: ${res.statusCode}`);
      },
      { concurrency: 64, warmup: 0 },
    );
    const seconds = (performance.now() - started) / 1000;
    floodRows.push([
      engine,
      name,
      FLOOD,
      queries - before,
      Math.round(FLOOD / seconds),
      fmt(percentile(t, 50), 3),
      fmt(percentile(t, 99), 3),
    ]);
  }

  await app.close();
  await base.close();
  await pg?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}

console.log(
  `${cpus().length} CPUs; load average before the run: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (other processes skew p99)`,
);
const rows: (string | number)[][] = [];
const floodRows: (string | number)[][] = [];
await run('sqlite', rows, floodRows);
const pgProblem = await postgresProblem();
if (pgProblem) console.log(`PostgreSQL skipped: ${pgProblem}`);
else await run('postgres', rows, floodRows);

printTable(
  `API key verification, in-process (app.inject, sequential, ${ROUNDS}×${PER_ROUND} interleaved per row; target: key adds p99 ≤ 0.2 ms)`,
  ['engine', 'request', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'added p50 ms', 'added p99 ms', 'DB queries/req'],
  rows,
);
printTable(
  'Flood of invalid keys on GET /v1/user (app.inject, 64 in flight, all answered 401)',
  ['engine', 'keys', 'requests', 'DB queries', 'req/s', 'p50 ms', 'p99 ms'],
  floodRows,
);
