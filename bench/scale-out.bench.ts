// Scale-out (issue 28, "Benchmarks"): a mixed load — reads, searches, metadata edits and uploads —
// against one SQLite `serve` process, one PostgreSQL API process and two PostgreSQL API processes
// (`serve --no-workers`, with a `worker` beside them), printed side by side; then job throughput
// (renditions/s of small JPEG uploads) with one and with two `worker` processes on PostgreSQL.
// Every process is a real `node src/main.ts …` on loopback; the load comes from this process
// (BENCH_CLIENTS concurrent clients, round-robin over the API processes, for BENCH_SECONDS).
// Run: `npm run bench -- scale-out`. The machine's load average is printed in each title: on a
// 2-core machine the load generator and every server share the cores.
import { loadavg } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { parseConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import { defaultTemplateId, loadTemplate } from '../src/features/metadata/index.ts';
import { createPgDatabase } from '../test/helpers/engines.ts';
import { freePort } from '../test/helpers/net.ts';
import { spawnTessera, type TesseraProcess } from '../test/helpers/tessera-process.ts';
import { fmt, percentile, printTable } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const ASSETS = Number(process.env.BENCH_ASSETS ?? 1500);
const UPLOADS = Number(process.env.BENCH_JOB_UPLOADS ?? 120);
const SECRET = 'bench-secret-key-0123456789abcdef0123';
const ADMIN = { username: 'bench-admin', password: 'Bench-Admin-Password-1' };
const WORDS = ['harbour', 'sunset', 'granite', 'meadow', 'lantern', 'orchid', 'glacier', 'copper', 'willow', 'ember'];
const load = () => loadavg()[0]!.toFixed(2);

interface Installation {
  databaseUrl: string;
  dataDir: string;
  env(extra?: Record<string, string>): Record<string, string>;
  drop(): Promise<void>;
}

async function installation(engine: 'sqlite' | 'postgres'): Promise<Installation> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-bench-scale-'));
  const pg = engine === 'postgres' ? await createPgDatabase() : undefined;
  const databaseUrl = pg ? pg.url : `sqlite:${join(dataDir, 'tessera.sqlite')}`;
  return {
    databaseUrl,
    dataDir,
    env: (extra = {}) => ({
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      TESSERA_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      TESSERA_SECRET_KEY: SECRET,
      TESSERA_PUBLIC_URL: 'http://127.0.0.1:9',
      TESSERA_LOG_LEVEL: 'info',
      TESSERA_ADMIN_USERNAME: ADMIN.username,
      TESSERA_ADMIN_PASSWORD: ADMIN.password,
      ...extra,
    }),
    async drop() {
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function startApi(inst: Installation, workers: boolean): Promise<{ url: string; p: TesseraProcess }> {
  const port = await freePort();
  const p = spawnTessera(workers ? ['serve'] : ['serve', '--no-workers'], inst.env({ PORT: String(port) }));
  await p.waitFor(/Server listening/, 120_000);
  return { url: `http://127.0.0.1:${port}`, p };
}

async function startWorker(inst: Installation): Promise<TesseraProcess> {
  const p = spawnTessera(['worker', '--concurrency', '2'], inst.env());
  await p.waitFor(/worker started/, 120_000);
  return p;
}

type Auth = Record<string, string>;
async function call(base: string, method: string, path: string, auth: Auth, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : undefined;
}

/** The organization's default template and its title attribute, read from the database as the servers see it. */
async function templateOf(inst: Installation): Promise<{ templateId: string; titleId: string; securityId: string }> {
  const deps = createDeps(
    parseConfig({
      DATABASE_URL: inst.databaseUrl,
      TESSERA_DATA_DIR: inst.dataDir,
      TESSERA_SECRET_KEY: SECRET,
      TESSERA_LOG_LEVEL: 'silent',
    }),
  );
  try {
    const org = await deps.db.selectFrom('organizations').select('id').executeTakeFirstOrThrow();
    const templateId = (await defaultTemplateId(deps.db, org.id))!;
    const template = (await loadTemplate(deps.db, org.id, templateId))!;
    const security = await deps.db
      .selectFrom('security_templates')
      .select('id')
      .where('org_id', '=', org.id)
      .orderBy('created_at')
      .executeTakeFirstOrThrow();
    return {
      templateId,
      titleId: template.attributes.find((a) => a.searchField === 'title')!.id,
      securityId: security.id,
    };
  } finally {
    await deps.close();
  }
}

async function signIn(base: string): Promise<Auth> {
  const login = await call(base, 'POST', '/v1/auth/token', {}, ADMIN);
  return { accesstoken: login.session.accessToken };
}

const jpegBytes = await sharp({ create: { width: 320, height: 240, channels: 3, background: '#3b7bb2' } })
  .jpeg()
  .toBuffer();

async function upload(
  base: string,
  auth: Auth,
  t: Awaited<ReturnType<typeof templateOf>>,
  name: string,
): Promise<string> {
  const created = await call(base, 'POST', '/v1/asset', auth, {
    filename: name,
    metadataTemplateId: t.templateId,
    metadata: [],
    securityTemplateIds: [t.securityId],
  });
  const url = new URL(created.url);
  const put = await fetch(`${base}${url.pathname}${url.search}`, {
    method: 'PUT',
    body: jpegBytes,
    headers: { 'content-type': 'application/octet-stream' },
  });
  if (put.status !== 200) throw new Error(`upload: ${put.status}`);
  return created.objectId;
}

/** Creates the library the load runs over: ASSETS assets (metadata only), titled with two of WORDS. */
async function seed(base: string, auth: Auth, t: Awaited<ReturnType<typeof templateOf>>): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const lane = async () => {
    while (next < ASSETS) {
      const i = next++;
      const created = await call(base, 'POST', '/v1/asset', auth, {
        filename: `seed-${i}.jpg`,
        metadataTemplateId: t.templateId,
        metadata: [
          { metadataDefinitionId: t.titleId, metadataDefinitionValue: `${WORDS[i % 10]} ${WORDS[(i * 7) % 10]} ${i}` },
        ],
        securityTemplateIds: [t.securityId],
      });
      ids.push(created.objectId);
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  return ids;
}

interface MixResult {
  requests: number;
  seconds: number;
  latencies: Record<'read' | 'search' | 'edit' | 'upload', number[]>;
  errors: number;
}

/** CLIENTS clients for SECONDS: 50 % reads, 25 % searches, 15 % metadata edits, 10 % uploads. */
async function mixedLoad(
  bases: string[],
  auth: Auth,
  t: Awaited<ReturnType<typeof templateOf>>,
  ids: string[],
): Promise<MixResult> {
  const latencies: MixResult['latencies'] = { read: [], search: [], edit: [], upload: [] };
  let requests = 0;
  let errors = 0;
  let turn = 0;
  const end = performance.now() + SECONDS * 1000;
  const client = async (c: number) => {
    let i = c;
    while (performance.now() < end) {
      const base = bases[turn++ % bases.length]!;
      const r = (i++ * 7919) % 100;
      const id = ids[(i * 104_729) % ids.length]!;
      const kind = r < 50 ? 'read' : r < 75 ? 'search' : r < 90 ? 'edit' : 'upload';
      const start = performance.now();
      try {
        if (kind === 'read') await call(base, 'GET', `/v1/asset/${id}`, auth);
        else if (kind === 'search')
          await call(base, 'POST', '/v1/search/keyword', auth, { searchTerm: [WORDS[i % 10]], limit: 25 });
        else if (kind === 'edit')
          await call(base, 'PATCH', `/v1/asset/${id}`, auth, {
            metadata: [{ metadataDefinitionId: t.titleId, metadataDefinitionValue: `${WORDS[i % 10]} edited ${i}` }],
          });
        else await upload(base, auth, t, `load-${c}-${i}.jpg`);
        latencies[kind].push(performance.now() - start);
        requests += kind === 'upload' ? 2 : 1;
      } catch {
        errors += 1;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  return { requests, seconds: (performance.now() - started) / 1000, latencies, errors };
}

async function pendingRenditions(inst: Installation): Promise<number> {
  const deps = createDeps(
    parseConfig({
      DATABASE_URL: inst.databaseUrl,
      TESSERA_DATA_DIR: inst.dataDir,
      TESSERA_SECRET_KEY: SECRET,
      TESSERA_LOG_LEVEL: 'silent',
    }),
  );
  try {
    const row = await deps.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('type', '=', 'assets.renditions')
      .where('status', 'in', ['pending', 'running'])
      .executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await deps.close();
  }
}

const mixRows: (string | number)[][] = [];
let onePg = 0;
for (const setup of [
  { name: 'SQLite, 1 process (serve)', engine: 'sqlite' as const, apis: 1 },
  { name: 'PostgreSQL, 1 API process + 1 worker', engine: 'postgres' as const, apis: 1 },
  { name: 'PostgreSQL, 2 API processes + 1 worker', engine: 'postgres' as const, apis: 2 },
]) {
  const inst = await installation(setup.engine);
  const processes: TesseraProcess[] = [];
  try {
    const apis: string[] = [];
    for (let i = 0; i < setup.apis; i++) {
      const api = await startApi(inst, setup.engine === 'sqlite');
      processes.push(api.p);
      apis.push(api.url);
    }
    if (setup.engine === 'postgres') processes.push(await startWorker(inst));
    const auth = await signIn(apis[0]!);
    const t = await templateOf(inst);
    const ids = await seed(apis[0]!, auth, t);
    await new Promise((r) => setTimeout(r, 2000)); // the search indexer catches up
    const result = await mixedLoad(apis, auth, t, ids);
    const rate = result.requests / result.seconds;
    if (setup.engine === 'postgres' && setup.apis === 1) onePg = rate;
    const p50 = (k: keyof MixResult['latencies']) => fmt(percentile(result.latencies[k], 50));
    mixRows.push([
      setup.name,
      Math.round(rate),
      setup.engine === 'postgres' && onePg > 0 ? (rate / onePg).toFixed(2) : '—',
      p50('read'),
      p50('search'),
      fmt(percentile(result.latencies.search, 99)),
      p50('edit'),
      p50('upload'),
      result.errors,
    ]);
  } finally {
    await Promise.all(processes.map((p) => p.stop(20_000)));
    await inst.drop();
  }
}
printTable(
  `Mixed load, ${CLIENTS} clients, ${SECONDS} s each (load average ${load()})`,
  [
    'setup',
    'requests/s',
    '× 1 PG process',
    'read p50 ms',
    'search p50 ms',
    'search p99 ms',
    'edit p50 ms',
    'upload p50 ms',
    'errors',
  ],
  mixRows,
  {
    setup:
      'the processes serving the load (API processes behind round-robin; on PostgreSQL a separate worker runs the jobs)',
    'requests/s': 'HTTP requests answered per second (an upload is two: create and PUT)',
    '× 1 PG process': 'requests/s against one PostgreSQL API process (target for two: ≥ 1.8)',
    'read p50 ms': 'GET /v1/asset/{id}',
    'search p50 ms': 'POST /v1/search/keyword (one word, 25 results, facets)',
    'search p99 ms': 'the same, 99th percentile',
    'edit p50 ms': 'PATCH /v1/asset/{id} (the title)',
    'upload p50 ms': 'create an asset and PUT a 320×240 JPEG (fsynced before the answer)',
    errors: 'requests that failed (none expected)',
  },
);

// Job throughput: UPLOADS uploads with no worker running, then N workers drain the renditions.
const jobRows: (string | number)[][] = [];
for (const workers of [1, 2]) {
  const inst = await installation('postgres');
  const processes: TesseraProcess[] = [];
  try {
    const api = await startApi(inst, false);
    processes.push(api.p);
    const auth = await signIn(api.url);
    const t = await templateOf(inst);
    let next = 0;
    const lane = async () => {
      while (next < UPLOADS) await upload(api.url, auth, t, `job-${next++}.jpg`);
    };
    await Promise.all(Array.from({ length: 4 }, lane));
    const queued = await pendingRenditions(inst);
    const started = performance.now();
    for (let i = 0; i < workers; i++) processes.push(await startWorker(inst));
    while ((await pendingRenditions(inst)) > 0) await new Promise((r) => setTimeout(r, 100));
    const seconds = (performance.now() - started) / 1000;
    jobRows.push([workers, queued, fmt(seconds, 1), (queued / seconds).toFixed(1)]);
  } finally {
    await Promise.all(processes.map((p) => p.stop(20_000)));
    await inst.drop();
  }
}
printTable(
  `Job throughput on PostgreSQL, ${UPLOADS} uploads of a 320×240 JPEG (load average ${load()})`,
  ['workers', 'renditions jobs', 'seconds', 'jobs/s'],
  jobRows,
  {
    workers:
      '`tessera worker --concurrency 2` processes draining the queue (started after the uploads; their start-up time is included)',
    'renditions jobs': 'assets.renditions jobs queued by the uploads',
    seconds: 'from starting the workers to an empty queue',
    'jobs/s': 'renditions jobs finished per second',
  },
);
