// Metadata-only asset creation, measured as a client gets it: POST /v1/assets/bulk over HTTP to a
// `tessera serve` process of its own (started as `npm start` starts it: bin/tessera.mjs with
// --max-semi-space-size=2, job workers, webhook delivery and the search indexer running in it), from
// this process over real sockets (keep-alive), at the endpoint's maximum batch (1000) and at a
// smaller one. Beside it, in the same run and on the same engine: the same requests in-process
// (Fastify inject, no workers; the number docs/assets.md used to quote), single creates
// (POST /v1/assets/asset) and bare inserts of the same rows, one per transaction and multi-row.
// After the HTTP rows, the time the running search indexer took to make the last asset searchable.
// Run: `npm run bench -- assets-create` (BENCH_ENGINES=sqlite,postgres; ASSETS_BENCH_CREATE assets
// per row, default 20,000; ASSETS_BENCH_SERVER_FLAGS adds node flags to the server and ASSETS_BENCH_SERVER_ENV
// variables (NAME=value …), e.g.
// `--cpu-prof --cpu-prof-dir=/tmp/prof`).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { sql } from 'kysely';
import { newId } from '../src/core/ids.ts';
import { insertRows } from '../src/core/db/insert-rows.ts';
import { parseConfig } from '../src/config.ts';
import { createDeps, type Deps } from '../src/deps.ts';
import { defaultTemplateId } from '../src/features/metadata/index.ts';
import { createPgDatabase, postgresProblem } from '../test/helpers/engines.ts';
import { freePort } from '../test/helpers/net.ts';
import { benchAssetRow, benchOrg } from './assets-fixture.ts';
import { fmt, printTable, startBenchServer } from './lib.ts';

const N = Number(process.env.ASSETS_BENCH_CREATE ?? 20_000);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',');
const SERVER_FLAGS = (process.env.ASSETS_BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean);
const MAX_BATCH = 1000; // BULK_CREATE_MAX: the most items the endpoint takes per request
const SMALL_BATCH = 100;
const SINGLE_N = Math.min(N, 3000);
const TARGET = 10_000;
const SECRET = 'bench-secret-key-0123456789abcdef0123';
const ADMIN = { username: 'bench-admin', password: 'Bench-Admin-Password-1' };
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function item(templateId: string, securityId: string, i: number) {
  return {
    metadataTemplateId: templateId,
    securityTemplateIds: [securityId],
    metadata: [
      { name: 'Title', value: `Bulk asset ${i}` },
      { name: 'Creator', value: 'Bench' },
    ],
  };
}

/** User + system CPU seconds of a process so far (/proc/<pid>/stat, clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface HttpServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `tessera serve` (workers on) in its own process, as `npm start` runs it; or the floor's server (assets-create-floor.ts). */
async function startServe(env: Record<string, string>, args = ['bin/tessera.mjs', 'serve']): Promise<HttpServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--max-semi-space-size=2', ...SERVER_FLAGS, ...args], {
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // Kept until it listens (then only the last few KB, for an error message).
  const append = (c: Buffer) => (out = (out + c.toString()).slice(-8192));
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const deadline = Date.now() + 120_000;
  while (!/Server listening/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`tessera serve did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });
/** One request over a kept-alive socket; resolves with the status and the body as text. */
function post(
  base: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends `total` assets in requests of `batch`, `inFlight` at a time; returns assets/s and the server's CPU per asset. */
async function bulkOverHttp(
  base: string,
  headers: Record<string, string>,
  payloads: string[],
  total: number,
  batch: number,
  inFlight: number,
  pid: number,
): Promise<{ rate: number; cpuUs: number; bytes: number }> {
  let next = 0;
  let bytes = 0;
  const requests = Math.ceil(total / batch);
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < requests) {
        const body = payloads[next++ % payloads.length]!;
        const res = await post(base, '/v1/assets/bulk', headers, body);
        if (res.status !== 200) throw new Error(`bulk: ${res.status} ${res.text.slice(0, 500)}`);
        bytes += res.text.length;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return { rate: (requests * batch) / seconds, cpuUs: ((cpuSeconds(pid) - cpu0) * 1e6) / (requests * batch), bytes };
}

/** On CPU so far of the database's backends (PostgreSQL: /proc/<pid>/schedstat of each; SQLite: none), in µs. */
async function backendsCpuUs(deps: Deps): Promise<number> {
  if (deps.engine !== 'postgres') return 0;
  const { rows } = await sql<{
    pid: number;
  }>`select pid from pg_stat_activity where datname = current_database()`.execute(deps.db);
  let total = 0;
  for (const { pid } of rows) {
    try {
      total += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
    } catch {
      // Exited, or another machine's server: not counted.
    }
  }
  return total;
}

async function countIndexed(deps: Deps, orgId: string): Promise<{ assets: number; indexed: number }> {
  const a = await sql<{ n: number }>`select count(*) as n from assets where org_id = ${orgId}`.execute(deps.db);
  const d = await sql<{ n: number }>`select count(*) as n from search_docs where org_id = ${orgId}`.execute(deps.db);
  return { assets: Number(a.rows[0]!.n), indexed: Number(d.rows[0]!.n) };
}

async function overHttp(pgUrl: string | undefined) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-bench-bulk-'));
  const databaseUrl = pgUrl ?? `sqlite:${join(dataDir, 'tessera.sqlite')}`;
  const env = {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: databaseUrl,
    TESSERA_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    TESSERA_SECRET_KEY: SECRET,
    TESSERA_PUBLIC_URL: 'http://127.0.0.1:9',
    TESSERA_LOG_LEVEL: 'info', // as `tessera serve` runs by default
    TESSERA_ADMIN_USERNAME: ADMIN.username,
    TESSERA_ADMIN_PASSWORD: ADMIN.password,
    // ASSETS_BENCH_SERVER_ENV="NAME=value …" (A/B runs, e.g. TESSERA_SEARCH_INDEXER_THREAD=false).
    ...Object.fromEntries(
      (process.env.ASSETS_BENCH_SERVER_ENV ?? '')
        .split(' ')
        .filter(Boolean)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    ),
  };
  const server = await startServe(env);
  const reader = createDeps(
    parseConfig({
      DATABASE_URL: databaseUrl,
      TESSERA_DATA_DIR: dataDir,
      TESSERA_SECRET_KEY: SECRET,
      TESSERA_LOG_LEVEL: 'silent',
    }),
  );
  try {
    const login = await post(server.url, '/v1/auth/token', {}, JSON.stringify(ADMIN));
    const headers = {
      accesstoken: (JSON.parse(login.text) as { session: { accessToken: string } }).session.accessToken,
    };
    const org = await reader.db.selectFrom('organizations').select('id').executeTakeFirstOrThrow();
    const templateId = (await defaultTemplateId(reader.db, org.id))!;
    const security = await reader.db
      .selectFrom('security_templates')
      .select('id')
      .where('org_id', '=', org.id)
      .orderBy('created_at')
      .executeTakeFirstOrThrow();
    let serial = 0;
    const payloadsOf = (batch: number) =>
      Array.from({ length: 4 }, () =>
        JSON.stringify({ assets: Array.from({ length: batch }, () => item(templateId, security.id, serial++)) }),
      );
    const big = payloadsOf(MAX_BATCH);
    const small = payloadsOf(SMALL_BATCH);
    // Warm-up: the route compiled, caches filled, the indexer has seen a burst.
    await bulkOverHttp(server.url, headers, big, 3 * MAX_BATCH, MAX_BATCH, 1, server.child.pid!);
    await bulkOverHttp(server.url, headers, small, 10 * SMALL_BATCH, SMALL_BATCH, 2, server.child.pid!);
    await new Promise((r) => setTimeout(r, 2000));
    const rows: { label: string; rate: number; cpuUs: number; load: string }[] = [];
    const floor: typeof rows = [];
    // The whole engine phase per asset, the indexer's catching up after the rows included: the
    // server's CPU and (PostgreSQL) its database backends' (connections that close meanwhile are lost).
    const whole0 = { server: cpuSeconds(server.child.pid!), backends: await backendsCpuUs(reader) };
    for (const [batch, inFlight, payloads] of [
      [MAX_BATCH, 1, big],
      [MAX_BATCH, 2, big],
      [SMALL_BATCH, 4, small],
    ] as const) {
      const r = await bulkOverHttp(server.url, headers, payloads, N, batch, inFlight, server.child.pid!);
      rows.push({
        label: `Tessera POST /v1/assets/bulk over HTTP, serve with workers, ${batch} per request, ${inFlight} in flight`,
        rate: r.rate,
        cpuUs: r.cpuUs,
        load: load(),
      });
    }
    // The indexer runs in the server: how long until every asset created above is searchable.
    const tIndex = performance.now();
    let counts = await countIndexed(reader, org.id);
    while (counts.indexed < counts.assets && performance.now() - tIndex < 120_000) {
      await new Promise((r) => setTimeout(r, 50));
      counts = await countIndexed(reader, org.id);
    }
    const catchUpMs = performance.now() - tIndex;
    const created = 3 * N;
    const whole = {
      serverUs: ((cpuSeconds(server.child.pid!) - whole0.server) * 1e6) / created,
      backendsUs: ((await backendsCpuUs(reader)) - whole0.backends) / created,
    };
    await server.stop();
    // The floor on the same database, from the same client with the same bodies, after the engine.
    const admin = await reader.db
      .selectFrom('users')
      .select('id')
      .where('org_id', '=', org.id)
      .where('username', '=', ADMIN.username)
      .executeTakeFirstOrThrow();
    const floorServer = await startServe({ ...env, FLOOR_ORG: org.id, FLOOR_USER: admin.id }, [
      'bench/assets-create-floor.ts',
    ]);
    try {
      const pid = floorServer.child.pid!;
      await bulkOverHttp(floorServer.url, {}, big, 3 * MAX_BATCH, MAX_BATCH, 1, pid);
      for (const inFlight of [1, 2] as const) {
        const r = await bulkOverHttp(floorServer.url, {}, big, N, MAX_BATCH, inFlight, pid);
        floor.push({
          label: `floor: the same requests to a bare HTTP server that only parses them and multi-row inserts the asset and security rows, ${MAX_BATCH} per request, ${inFlight} in flight`,
          rate: r.rate,
          cpuUs: r.cpuUs,
          load: load(),
        });
      }
    } finally {
      await floorServer.stop();
    }
    return { rows, floor, catchUpMs, counts, whole };
  } finally {
    await reader.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function inProcess(pgUrl: string | undefined) {
  const server = await startBenchServer(pgUrl ? { DATABASE_URL: pgUrl } : {});
  const { org, headers, templateId } = await benchOrg(server);
  try {
    const body = item(templateId, org.defaultTemplateId, 0);
    // Warm-up: both routes compiled and their caches filled before anything is timed.
    for (let i = 0; i < 100; i++)
      await server.app.inject({ method: 'POST', url: '/v1/assets/asset', headers, payload: body });
    const batchPayload = JSON.stringify({
      assets: Array.from({ length: MAX_BATCH }, (_, i) => item(templateId, org.defaultTemplateId, i)),
    });
    for (let i = 0; i < 2; i++)
      await server.app.inject({ method: 'POST', url: '/v1/assets/bulk', headers, payload: batchPayload });

    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < SINGLE_N) {
          next++;
          const res = await server.app.inject({ method: 'POST', url: '/v1/assets/asset', headers, payload: body });
          if (res.statusCode !== 200) throw new Error(res.body);
        }
      }),
    );
    const single = SINGLE_N / ((performance.now() - t0) / 1000);

    const tb = performance.now();
    for (let done = 0; done < N; done += MAX_BATCH) {
      const res = await server.app.inject({ method: 'POST', url: '/v1/assets/bulk', headers, payload: batchPayload });
      if (res.statusCode !== 200) throw new Error(res.body.slice(0, 500));
    }
    const bulk = (Math.ceil(N / MAX_BATCH) * MAX_BATCH) / ((performance.now() - tb) / 1000);

    const db = server.deps.db;
    const bareRow = (id: string, now: number) =>
      benchAssetRow({ id, orgId: org.orgId, templateId, userId: org.adminUserId, now });
    const t1 = performance.now();
    for (let i = 0; i < SINGLE_N; i++) {
      const now = Date.now();
      const id = newId(now);
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('assets').values(bareRow(id, now)).execute();
        await trx
          .insertInto('asset_security')
          .values({ org_id: org.orgId, asset_id: id, template_id: org.defaultTemplateId })
          .execute();
      });
    }
    const raw = SINGLE_N / ((performance.now() - t1) / 1000);

    const t2 = performance.now();
    for (let done = 0; done < N; done += MAX_BATCH) {
      const now = Date.now();
      const ids = Array.from({ length: Math.min(MAX_BATCH, N - done) }, () => newId(now));
      await db.transaction().execute(async (trx) => {
        await insertRows(
          trx,
          'assets',
          ids.map((id) => bareRow(id, now)),
        );
        await insertRows(
          trx,
          'asset_security',
          ids.map((id) => ({ org_id: org.orgId, asset_id: id, template_id: org.defaultTemplateId })),
        );
      });
    }
    const rawMulti = N / ((performance.now() - t2) / 1000);
    return { raw, rawMulti, single, bulk };
  } finally {
    await server.close();
  }
}

for (const engine of ENGINES) {
  let pg: Awaited<ReturnType<typeof createPgDatabase>> | undefined;
  let pgIn: Awaited<ReturnType<typeof createPgDatabase>> | undefined;
  if (engine === 'postgres') {
    const problem = await postgresProblem();
    if (problem) {
      console.log(`\n(PostgreSQL skipped: ${problem})`);
      continue;
    }
    pg = await createPgDatabase();
    pgIn = await createPgDatabase();
  }
  const loadBefore = load();
  try {
    const http = await overHttp(pg?.url);
    const local = await inProcess(pgIn?.url);
    const best = Math.max(...http.rows.map((r) => r.rate));
    const floorBest = Math.max(...http.floor.map((r) => r.rate));
    printTable(
      `Metadata-only asset creation, ${engine}, ${N} assets per bulk row (${cpus().length} CPUs; load average before ${loadBefore}, after ${load()}); target over HTTP ≥ ${TARGET}/s: best ${fmt(best, 0)}/s = ${fmt(best / TARGET)}× the target; floor over HTTP ${fmt(floorBest, 0)}/s = ${fmt(floorBest / TARGET)}× the target; engine ÷ floor ${fmt(best / floorBest)}`,
      ['path', 'assets/s', 'vs target', 'vs floor', 'server CPU µs/asset', 'load after row'],
      [
        ...[...http.rows, ...http.floor].map((r) => [
          r.label,
          fmt(r.rate, 0),
          fmt(r.rate / TARGET),
          fmt(r.rate / floorBest),
          fmt(r.cpuUs, 0),
          r.load,
        ]),
        [
          `in-process inject, no workers, ${MAX_BATCH} per request, 1 in flight (same engine, same run)`,
          fmt(local.bulk, 0),
          fmt(local.bulk / TARGET),
          fmt(local.bulk / floorBest),
          '—',
          load(),
        ],
        [
          `in-process inject POST /v1/assets/asset, one asset per request, 8 in flight`,
          fmt(local.single, 0),
          fmt(local.single / TARGET),
          fmt(local.single / floorBest),
          '—',
          '',
        ],
        [
          'bare insert (asset + security row, one transaction each)',
          fmt(local.raw, 0),
          fmt(local.raw / TARGET),
          fmt(local.raw / floorBest),
          '—',
          '',
        ],
        [
          `bare multi-row insert (asset + security rows, ${MAX_BATCH} per transaction)`,
          fmt(local.rawMulti, 0),
          fmt(local.rawMulti / TARGET),
          fmt(local.rawMulti / floorBest),
          '—',
          '',
        ],
      ],
      {
        path: 'how the assets were created: over HTTP to a separate `tessera serve` process with its job workers, webhook delivery and search indexer running; over HTTP to the floor server; in-process through Fastify inject (no sockets, no workers); or bare rows written straight to the database',
        'vs target': `assets/s divided by the target of ${TARGET}/s (1: met)`,
        'vs floor':
          'assets/s divided by the best floor row of this run: the same HTTP requests answered by a bare server that writes only the asset and security rows (bench/assets-create-floor.ts), the most any path over HTTP can reach here',
        'server CPU µs/asset':
          'CPU time (user + system, all threads) of the server process per created asset, from /proc/<pid>/stat, including its workers and indexer',
        'load after row': 'os.loadavg() when the row finished',
      },
    );
    console.log(
      `Search freshness: after the last HTTP row, the server's indexer made all ${http.counts.assets} assets searchable in ${fmt(http.catchUpMs, 0)} ms (${http.counts.indexed} indexed).`,
    );
    console.log(
      `CPU per asset of the three HTTP rows and the indexing after them: server ${fmt(http.whole.serverUs, 0)} µs${engine === 'postgres' ? `, PostgreSQL backends ${fmt(http.whole.backendsUs, 0)} µs` : ''}.`,
    );
  } finally {
    await pg?.drop();
    await pgIn?.drop();
  }
}
agent.destroy();
