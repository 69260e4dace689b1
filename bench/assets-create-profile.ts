// Where a bulk-created asset's CPU goes, phase by phase, in one process (decision 0018's method):
// a 1000-asset POST /v1/assets/bulk through Fastify inject, then one search indexer pass, then one
// audit seal, ROUNDS times; thread CPU (process.threadCpuUsage) per asset of each phase, so the
// other processes on the machine inflate it less than wall time. SQLite's WAL is checkpointed between
// rounds, as the background thread does it in `tessera serve` (decision 0028). With SQL_STATS=1 (SQLite) also the
// statement CPU by statement text; on PostgreSQL the server's backends' CPU (/proc) per phase.
// Run: `node bench/assets-create-profile.ts` (ROUNDS, BENCH_ENGINE=sqlite|postgres, SQL_STATS).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { checkpointSqlite, setSqliteAutoCheckpoint } from '../src/core/db/connect.ts';
import { sealPending } from '../src/features/audit/chain/chain.ts';
import { syncSearchIndex, indexInShortTransactions } from '../src/features/search/index.ts';
import { createPgDatabase } from '../test/helpers/engines.ts';
import { benchOrg } from './assets-fixture.ts';
import { aroundSqliteStatements, startBenchServer } from './lib.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 20);
const ENGINE = process.env.BENCH_ENGINE ?? 'sqlite';
const BATCH = 1000;

const sqlStats = new Map<string, { n: number; us: number }>();
let counting = false;
let current = '';
if (process.env.SQL_STATS && ENGINE === 'sqlite') {
  aroundSqliteStatements((source, run) => {
    if (!counting) return run();
    const t = process.threadCpuUsage();
    try {
      return run();
    } finally {
      const d = process.threadCpuUsage(t);
      const key = current + ': ' + source.replace(/\(\?(, \?)*\)(, \(\?(, \?)*\))*/g, '(…)').slice(0, 110);
      const s = sqlStats.get(key) ?? { n: 0, us: 0 };
      s.n++;
      s.us += d.user + d.system;
      sqlStats.set(key, s);
    }
  });
}

/** On CPU so far of a PostgreSQL backend, in µs (/proc/<pid>/schedstat: nanosecond precision, unlike ticks). */
function backendOnCpuUs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return 0;
  }
}
if (process.env.SQL_STATS && ENGINE === 'postgres') {
  // The backend's CPU per statement text: the driver's client knows its backend's pid.
  const Client = createRequire(import.meta.url)('pg').Client;
  const inner = Client.prototype.query;
  Client.prototype.query = function (this: { processID: number }, ...args: unknown[]) {
    const result = inner.apply(this, args);
    if (!counting || typeof args[0] !== 'string' || !(result instanceof Promise)) return result;
    const text = args[0] as string;
    const pid = this.processID;
    const t = backendOnCpuUs(pid);
    const key = current;
    const done = () => {
      const full = `${key}: ${text.replace(/\s+/g, ' ').slice(0, 110)}`;
      const s = sqlStats.get(full) ?? { n: 0, us: 0 };
      s.n++;
      s.us += backendOnCpuUs(pid) - t;
      sqlStats.set(full, s);
    };
    return result.then(
      (r: unknown) => {
        done();
        return r;
      },
      (e: unknown) => {
        done();
        throw e;
      },
    );
  };
}

const pg = ENGINE === 'postgres' ? await createPgDatabase() : undefined;
const server = await startBenchServer(pg ? { DATABASE_URL: pg.url } : {});
const { org, headers, templateId } = await benchOrg(server);
const deps = server.deps;
if (process.env.SHORT_TRANSACTIONS) indexInShortTransactions(Number(process.env.SHORT_TRANSACTIONS));
// As `tessera serve` runs SQLite with its background thread (decision 0028): no checkpoint inside a
// commit; here one between rounds, outside the phases measured.
setSqliteAutoCheckpoint(deps.db, 0);

/** CPU seconds of this database's PostgreSQL backends so far. */
async function pgBackendCpu(): Promise<number> {
  if (!pg) return 0;
  const { rows } = await sql<{
    pid: number;
  }>`select pid from pg_stat_activity where datname = current_database()`.execute(deps.db);
  let total = 0;
  for (const { pid } of rows) total += backendOnCpuUs(pid) / 1e6;
  return total;
}

// PROFILE_SETUP_SQL: statements (separated by `;;`) run once after the migrations, to measure a
// schema variant before it becomes a migration.
for (const statement of (process.env.PROFILE_SETUP_SQL ?? '').split(';;').filter((x) => x.trim() !== ''))
  await sql.raw(statement).execute(deps.db);

let serial = 0;
const body = () =>
  JSON.stringify({
    assets: Array.from({ length: BATCH }, () => ({
      metadataTemplateId: templateId,
      securityTemplateIds: [org.defaultTemplateId],
      metadata: [
        { name: 'Title', value: `Bulk asset ${serial++}` },
        { name: 'Creator', value: 'Bench' },
      ],
    })),
  });

const phases = ['request', 'index', 'seal'] as const;
const cpu = { request: [] as number[], index: [] as number[], seal: [] as number[] };
const pgCpu = { request: 0, index: 0, seal: 0 };
async function phase(name: (typeof phases)[number], fn: () => Promise<unknown>, measured: boolean) {
  const pg0 = measured ? await pgBackendCpu() : 0;
  const t = process.threadCpuUsage();
  counting = measured;
  current = name;
  await fn();
  counting = false;
  const d = process.threadCpuUsage(t);
  if (!measured) return;
  cpu[name].push((d.user + d.system) / BATCH);
  pgCpu[name] += ((await pgBackendCpu()) - pg0) * 1e6;
}

const load0 = loadavg()[0]!.toFixed(2);
for (let round = -3; round < ROUNDS; round++) {
  const payload = body();
  const measured = round >= 0;
  await phase(
    'request',
    async () => {
      const res = await server.app.inject({ method: 'POST', url: '/v1/assets/bulk', headers, payload });
      if (res.statusCode !== 200) throw new Error(res.body.slice(0, 300));
    },
    measured,
  );
  await phase('index', () => syncSearchIndex(deps), measured);
  await phase('seal', () => sealPending(deps.db, deps.engine, deps.keys), measured);
  checkpointSqlite(deps.db);
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `${ENGINE}, ${ROUNDS} rounds of ${BATCH}, load ${load0} → ${loadavg()[0]!.toFixed(2)}: thread CPU µs/asset (median; min–max)`,
);
for (const p of phases) {
  const xs = cpu[p];
  console.log(
    `  ${p.padEnd(8)} ${med(xs).toFixed(1).padStart(7)}  (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})${pg ? `   PostgreSQL backends ${(pgCpu[p] / (ROUNDS * BATCH)).toFixed(1)} µs/asset` : ''}`,
  );
}
const total = phases.reduce((a, p) => a + med(cpu[p]), 0);
console.log(`  total    ${total.toFixed(1).padStart(7)}`);
if (sqlStats.size > 0) {
  console.log('statement CPU µs/asset (all phases):');
  for (const [k, s] of [...sqlStats].sort((a, b) => b[1].us - a[1].us).slice(0, 25))
    console.log(`  ${(s.us / (ROUNDS * BATCH)).toFixed(2).padStart(6)}  ×${String(s.n).padStart(5)}  ${k}`);
}
await server.close();
if (process.env.KEEP_DB && pg) console.log(`kept ${pg.url}`);
else await pg?.drop();
