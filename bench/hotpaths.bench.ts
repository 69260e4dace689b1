// Hot paths (issue 14): the production server (the command `npm start` runs, flags included) in
// its own process, loaded over loopback by wrk (`-t1 -c32`), or by a Node load generator in a
// second process when wrk is not installed. In the same run: GET /healthz (the framework's own
// ceiling: no credentials, no database) against an authenticated GET /v1/user with an access token
// and with an API key, and GET of an asset by id when the assets feature is present; requests/s,
// p99 and each authenticated route as a fraction of /healthz; idle and under-load RSS.
// Run: `npm run bench -- hotpaths` (BENCH_ENGINES=sqlite,postgres; BENCH_SECONDS per route).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createPgDatabase } from '../test/helpers/engines.ts';
import { freePort } from '../test/helpers/net.ts';
import { fmt, printTable } from './lib.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = 32;
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',');
const HAS_WRK = spawnSync('sh', ['-c', 'command -v wrk']).status === 0 && process.env.BENCH_NO_WRK !== '1';
const PASSWORD = 'bench correct horse battery';
const require = createRequire(import.meta.url);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

interface Server {
  url: string;
  child: ChildProcess;
  close(): Promise<void>;
}

async function startServer(engine: string): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-bench-hot-'));
  const pg = engine === 'postgres' ? await createPgDatabase() : undefined;
  const port = await freePort();
  // Exactly what `npm start` runs (its flags included), with this Node.
  const start = (
    JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }
  ).scripts.start.split(/\s+/);
  if (start[0] !== 'node') throw new Error(`unexpected start script: ${start.join(' ')}`);
  const child = spawn(process.execPath, start.slice(1), {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      TESSERA_DATA_DIR: dataDir,
      TESSERA_LOG_LEVEL: 'warn',
      TESSERA_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
      TESSERA_ADMIN_USERNAME: 'bench-admin',
      TESSERA_ADMIN_PASSWORD: PASSWORD,
      ...(pg ? { DATABASE_URL: pg.url } : {}),
    },
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      if (i > 300) throw new Error('server did not start');
    }
    await sleep(50);
  }
  return {
    url,
    child,
    async close() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function call(url: string, init: RequestInit & { body?: string } = {}): Promise<any> {
  const res = await fetch(url, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

interface LoadResult {
  rps: number;
  p99: number;
  errors: number;
}

/** wrk's summary: requests/s, p99 latency (ms) and non-2xx/socket errors. */
function parseWrk(out: string): LoadResult {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const m = /\s99%\s+([\d.]+)(us|ms|s)\b/.exec(out);
  const p99 = m ? Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1) : NaN;
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return { rps, p99, errors: non2xx + (sock ? sock.slice(1).reduce((s, x) => s + Number(x), 0) : 0) };
}

// The fallback load generator: its own process (own core), CONNECTIONS keep-alive connections.
const NODE_LOAD = `
const { Agent, request } = require(${JSON.stringify(require.resolve('undici'))});
const [url, headersJson, seconds, conns] = process.argv.slice(1);
const headers = JSON.parse(headersJson);
const agent = new Agent({ connections: Number(conns), pipelining: 1 });
const times = []; let errors = 0; let stop = false;
(async () => {
  const end = Date.now() + Number(seconds) * 1000;
  setTimeout(() => { stop = true; }, Number(seconds) * 1000);
  await Promise.all(Array.from({ length: Number(conns) }, async () => {
    while (!stop) {
      const t = performance.now();
      try { const r = await request(url, { headers, dispatcher: agent }); await r.body.dump(); if (r.statusCode >= 300) errors++; } catch { errors++; }
      times.push(performance.now() - t);
    }
  }));
  times.sort((a, b) => a - b);
  process.stdout.write(JSON.stringify({ rps: times.length / Number(seconds), p99: times[Math.ceil(times.length * 0.99) - 1], errors }));
  process.exit(0);
})();
`;

async function load(url: string, headers: Record<string, string>, seconds: number): Promise<LoadResult> {
  const args = HAS_WRK
    ? ([
        'wrk',
        [
          '-t1',
          `-c${CONNECTIONS}`,
          `-d${seconds}s`,
          '--latency',
          ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
          url,
        ],
      ] as const)
    : ([
        process.execPath,
        ['-e', NODE_LOAD, url, JSON.stringify(headers), String(seconds), String(CONNECTIONS)],
      ] as const);
  const child = spawn(args[0], [...args[1]], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  await new Promise((r) => child.once('exit', r));
  return HAS_WRK ? parseWrk(out) : (JSON.parse(out) as LoadResult);
}

const rows: (string | number)[][] = [];
const memory: (string | number)[][] = [];
for (const engine of ENGINES) {
  let server: Server | undefined;
  try {
    server = await startServer(engine);
    await sleep(3000);
    const idle = rssMiB(server.child.pid!);
    const session = await call(`${server.url}/v1/auth/token`, {
      method: 'POST',
      body: JSON.stringify({ username: 'bench-admin', password: PASSWORD }),
    });
    const token = { accesstoken: session.session.accessToken as string };
    const me = await call(`${server.url}/v1/user`, { headers: token });
    const key = await call(`${server.url}/api/v1/api-key/create-api-key`, {
      method: 'POST',
      headers: token,
      body: JSON.stringify({ name: 'bench', roleId: me.roleId ?? me.role?.id }),
    });
    const routes: [string, string, Record<string, string>][] = [
      ['GET /healthz (no credentials: the baseline)', '/healthz', {}],
      ['GET /v1/user, access token', '/v1/user', token],
      ['GET /v1/user, API key', '/v1/user', { 'x-api-key': key.key as string }],
    ];
    // Assets arrive with their own feature; bench the read by id when the route exists.
    const asset = await fetch(`${server.url}/v1/asset/00000000-0000-7000-8000-000000000000`, { headers: token });
    if (asset.status !== 404 || ((await asset.json()) as { code?: string }).code !== 'route_not_found') {
      const created = await createAsset(server.url, token);
      routes.push(['GET /v1/asset/{id}, access token', `/v1/asset/${created}`, token]);
      routes.push([
        'GET /v1/assets/asset/{id}, API key',
        `/v1/assets/asset/${created}`,
        { 'x-api-key': key.key as string },
      ]);
    }
    let peak = idle;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMiB(server!.child.pid!));
    }, 200);
    await load(`${server.url}/healthz`, {}, 2); // warm-up: JIT, connections
    let base = NaN;
    for (const [name, path, headers] of routes) {
      const r = await load(`${server.url}${path}`, headers, SECONDS);
      if (path === '/healthz') base = r.rps;
      rows.push([
        name,
        engine,
        fmt(r.rps, 0),
        fmt(r.p99, 2),
        r.errors,
        path === '/healthz' ? '1.00 (baseline)' : fmt(r.rps / base, 2),
      ]);
    }
    clearInterval(sampler);
    memory.push([engine, fmt(idle, 1), fmt(peak, 1)]);
  } catch (error) {
    rows.push([`(${(error as Error).message.slice(0, 80)})`, engine, '—', '—', '—', '—']);
  } finally {
    await server?.close();
  }
}

/** Creates one metadata-only asset with the 1.5 call (default metadata and security templates of a fresh install); returns its objectId. */
async function createAsset(url: string, headers: Record<string, string>): Promise<string> {
  const templates = await call(`${url}/v1/metadata/templates`, { headers });
  const metadataTemplateId = (templates.results as { templateId: string; templateType: string[] }[]).find((t) =>
    t.templateType.includes('default'),
  )?.templateId;
  const security = (await call(`${url}/v1/security/template`, { headers })) as { templateId: string }[];
  const body = {
    metadataTemplateId,
    securityTemplateIds: [security[0]?.templateId],
    metadata: [{ name: 'Title', value: 'Bench' }],
  };
  const res = await call(`${url}/v1/assets/asset`, { method: 'POST', headers, body: JSON.stringify(body) });
  const id = res?.data?.objectId ?? res?.objectId;
  if (typeof id !== 'string') throw new Error(`asset create answered ${JSON.stringify(res).slice(0, 200)}`);
  return id;
}

printTable(
  `Authenticated reads against GET /healthz, one server process, ${HAS_WRK ? `wrk -t1 -c${CONNECTIONS}` : `Node load generator, ${CONNECTIONS} connections`}, ${SECONDS} s each`,
  ['route', 'database', 'requests/s', 'p99 ms', 'errors', 'fraction of /healthz'],
  rows,
);
printTable(
  'Server memory (RSS of the `npm start` command, MiB)',
  ['database', 'idle (3 s after start)', 'peak under the load above'],
  memory,
);
printTable(
  'Targets',
  ['metric', 'target'],
  [
    ['authenticated route / healthz', '≥ 0.5'],
    ['idle RSS of npm start', '≤ 120 MiB'],
  ],
);
process.exit(0);
