// Profiles the delivery engine alone under the webhooks bench's load: N backlogged events, one
// endpoint on a loopback receiver in another process, SQLite (or BENCH_ENGINE=postgres). Prints the
// functions with the most self time in the measured pass and writes the .cpuprofile beside it.
// Run: `node bench/webhooks-profile.ts` (BENCH_N, BENCH_ENGINE, PROFILE_OUT; SQL_STATS=1 times each SQLite
// statement; WAL_AUTOCHECKPOINT=0 also prints the WAL pages written per delivery).
import { aroundSqliteStatements } from './lib.ts';
import { spawn } from 'node:child_process';
import { writeFileSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { parseConfig } from '../src/config.ts';
import { createDeps, type Deps } from '../src/deps.ts';
import { migrateToLatest } from '../src/core/db/migrate.ts';
import { publishEvent } from '../src/core/events/index.ts';
import { newId } from '../src/core/ids.ts';
import { assetData, settled as settledFor } from './webhooks-shared.ts';
import { createOrganization, loadUserPrincipal } from '../src/features/identity/index.ts';
import { seedOrganizationMetadata } from '../src/features/metadata/index.ts';
import { createDeliveryEngine } from '../src/features/webhooks/index.ts';
import { createEndpoints } from '../src/features/webhooks/endpoints/endpoints.service.ts';
import { createPgDatabase } from '../test/helpers/engines.ts';
import { createGuardedDispatcher } from '../src/core/net/ssrf.ts';
import { generateSecret, sendOnce, webhookHeaders } from '../src/features/webhooks/delivery/index.ts';
import { insertAttemptRows } from '../src/features/webhooks/delivery-engine/record-outcomes.ts';
import type { WebhookAttemptsTable } from '../src/core/db/schema.ts';

const N = Number(process.env.BENCH_N ?? 20_000);
// SQLite: time (and count) per statement text, lists of placeholders folded, when SQL_STATS is set.
const sqlStats = new Map<string, { n: number; us: number; max: number; slow: number }>();
let counting = false;
if (process.env.SQL_STATS) {
  aroundSqliteStatements((source, run) => {
    if (!counting) return run();
    const t = performance.now();
    try {
      return run();
    } finally {
      const key = source
        .replace(/(\?, )+\?/g, '?…')
        .replace(/(\(\?…\), )+\(\?…\)/g, '(…)…')
        .slice(0, 150);
      const s = sqlStats.get(key) ?? { n: 0, us: 0, max: 0, slow: 0 };
      const us = (performance.now() - t) * 1000;
      s.n += 1;
      s.us += us;
      s.max = Math.max(s.max, us);
      if (us > 1000) s.slow += 1;
      sqlStats.set(key, s);
    }
  });
}
const ENGINE = process.env.BENCH_ENGINE ?? 'sqlite';
const OUT = process.env.PROFILE_OUT ?? `/tmp/webhooks-${ENGINE}.cpuprofile`;

const RECEIVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('ok'); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
// Gone with the harness, even when it fails (else it holds the harness's stdout open).
process.on('disconnect', () => process.exit(0));
`;
const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));

const dataDir = mkdtempSync(join(tmpdir(), 'tessera-prof-wh-'));
const pg = ENGINE === 'postgres' ? await createPgDatabase() : undefined;
const deps = createDeps(
  parseConfig({
    TESSERA_DATA_DIR: dataDir,
    TESSERA_LOG_LEVEL: 'silent',
    TESSERA_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
    TESSERA_ALLOW_PRIVATE_TARGETS: 'true',
    ...(pg ? { DATABASE_URL: pg.url } : {}),
  }),
  { poolSize: 10 },
);
await migrateToLatest(deps.db);
for (const pragma of (process.env.PRAGMAS ?? '').split(',').filter(Boolean))
  await sql.raw(`pragma ${pragma}`).execute(deps.db);
if (process.env.WAL_AUTOCHECKPOINT)
  await sql.raw(`pragma wal_autocheckpoint = ${Number(process.env.WAL_AUTOCHECKPOINT)}`).execute(deps.db);
const org = await deps.db
  .transaction()
  .execute((trx) =>
    createOrganization(
      trx,
      Date.now(),
      { name: 'Bench', admin: { username: `bench-${newId()}`, email: 'bench@example.test', passwordHash: 'x' } },
      seedOrganizationMetadata,
    ),
  );
const principal = (await loadUserPrincipal(deps.db, org.adminUserId))!;
const [{ id: endpointId }] = await createEndpoints(
  deps,
  principal,
  [{ description: 'Bench receiver', url: `http://127.0.0.1:${port}/hook`, eventTypes: ['asset.*'] }],
  '127.0.0.1',
);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function publish(d: Deps, count: number) {
  for (let done = 0; done < count; done += 500)
    await d.db.transaction().execute(async (trx) => {
      for (let i = 0; i < Math.min(500, count - done); i++)
        await publishEvent(trx, Date.now(), {
          orgId: org.orgId,
          type: 'asset.created',
          actor: null,
          data: assetData(),
        });
    });
}
/** The bench's attempt floor: signed sends, 32 at a time, each attempt row group-committed (256 / 20 ms). */
async function floorPass(profile?: Session) {
  const dispatcher = createGuardedDispatcher({ allowPrivate: true, connections: 32 });
  const secret = generateSecret();
  const body = JSON.stringify({
    eventType: 'asset.created',
    event: { id: `asset-created-${newId()}`, time: new Date().toISOString(), user: null },
    data: assetData(),
  });
  let rows: WebhookAttemptsTable[] = [];
  let commits: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const commit = () => {
    clearTimeout(timer);
    timer = undefined;
    const batch = rows;
    rows = [];
    if (batch.length > 0)
      commits = commits.then(() => deps.db.transaction().execute((trx) => insertAttemptRows(trx, batch)));
  };
  if (profile) await profile.post('Profiler.start');
  counting = Boolean(profile);
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next++ < N) {
        const msgId = newId();
        const at = Date.now();
        const result = await sendOnce({
          url: `http://127.0.0.1:${port}/hook`,
          body,
          dispatcher,
          headers: webhookHeaders({ msgId, timestamp: Math.floor(at / 1000), body, secrets: [secret] }),
        });
        rows.push({
          id: newId(at),
          org_id: org.orgId,
          endpoint_id: endpointId,
          message_id: msgId,
          attempt: 1,
          at,
          ok: result.ok ? 1 : 0,
          status_code: result.status ?? null,
          latency_ms: Math.round(result.latencyMs),
          response_body: result.responseBody || null,
          error_class: result.errorClass ?? null,
        });
        if (rows.length >= 256) commit();
        else timer ??= setTimeout(commit, 20);
      }
    }),
  );
  commit();
  await commits;
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  counting = false;
  const result = profile ? ((await profile.post('Profiler.stop')) as { profile: Profile }).profile : undefined;
  await dispatcher.close();
  return { rate: (N / elapsed) * 1000, cpuUs: (used.user + used.system) / N, profile: result, stats: {} };
}

async function pass(profile?: Session) {
  if (process.env.FLOOR) return floorPass(profile);
  await publish(deps, N);
  const engine = createDeliveryEngine(deps, { pollMs: 20, flushMs: Number(process.env.FLUSH_MS ?? 20) });
  if (profile) await profile.post('Profiler.start');
  counting = Boolean(profile);
  const cpu = process.cpuUsage();
  const started = performance.now();
  engine.start();
  while (!(await settledFor(deps))) await sleep(20);
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  counting = false;
  const result = profile ? ((await profile.post('Profiler.stop')) as { profile: Profile }).profile : undefined;
  await engine.stop();
  return { rate: (N / elapsed) * 1000, cpuUs: (used.user + used.system) / N, profile: result, stats: engine.stats() };
}

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[];
  samples: number[];
  timeDeltas: number[];
}

// SQLite: the WAL's frames written by the measured pass (pages, with WAL_AUTOCHECKPOINT=0 so none is
// copied back meanwhile): what the commits wrote, independent of how loaded the machine is.
const pageSize =
  ENGINE === 'sqlite' ? (await sql<{ page_size: number }>`pragma page_size`.execute(deps.db)).rows[0]!.page_size : 0;
const walFrames = () => {
  if (ENGINE !== 'sqlite') return 0;
  const wal = readdirSync(dataDir, { recursive: true, encoding: 'utf8' }).find((f) => f.endsWith('-wal'));
  // A WAL is a 32-byte header and frames of a 24-byte header and one page.
  return wal ? Math.max(0, statSync(join(dataDir, wal)).size - 32) / (pageSize + 24) : 0;
};
await pass();
if (ENGINE === 'sqlite') await sql.raw('pragma wal_checkpoint(truncate)').execute(deps.db);
const framesBefore = walFrames();
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 200 });
const measured = await pass(session);
const frames = walFrames() - framesBefore;
const profile = measured.profile!;
writeFileSync(OUT, JSON.stringify(profile));
const self = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++)
  self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i] ?? 0));
const byFunction = new Map<string, number>();
let total = 0;
for (const node of profile.nodes) {
  const us = self.get(node.id) ?? 0;
  total += us;
  const f = node.callFrame;
  const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
}
console.log(
  `${process.env.FLOOR ? 'floor' : 'engine'} ${ENGINE}: ${N} deliveries, ${measured.rate.toFixed(0)}/s, ${measured.cpuUs.toFixed(1)} µs CPU per delivery (this process), load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(
      ' ',
    )}, ${JSON.stringify(measured.stats)}${frames ? `, WAL pages ${(frames / N).toFixed(2)} per delivery (incl. publishing)` : ''}`,
);
const idle = [...byFunction].filter(([k]) => k.startsWith('(idle)')).reduce((s, [, v]) => s + v, 0);
for (const [key, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 45)))
  console.log(
    `${((us / (total - idle)) * 100).toFixed(1).padStart(5)}%  ${(us / N).toFixed(2).padStart(6)} µs/delivery  ${key}`,
  );
for (const [key, s] of [...sqlStats].sort((a, b) => b[1].us - a[1].us).slice(0, 30))
  console.log(
    `${(s.us / N).toFixed(2).padStart(7)} µs/delivery ${String(s.n).padStart(6)}× max ${(s.max / 1000).toFixed(1)} ms, ${s.slow} > 1 ms: ${key.replace(/\s+/g, ' ')}`,
  );
await deps.close();
await pg?.drop();
rmSync(dataDir, { recursive: true, force: true });
child.kill();
process.exit(0);
