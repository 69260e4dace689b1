// CDN edge benchmark: cache-hit requests/s and latency for a 20 KB and a 200 KB object through the
// Tessera edge (`tessera edge`, 1 process and 2 workers) against nginx proxy_cache (Debian package,
// 2 workers, on-disk cache, sendfile) in front of the same origin, measured with wrk in one run.
// Varnish Cache (Debian package, malloc storage, its default thread pools) is a second peer when
// installed: the other cache engine the edge could have driven as its hit path (decision 0010).
// Then 1,000 concurrent cold requests for one object → origin fetch count.
//
// Equivalence: same origin, same wrk load, 2 nginx workers against 2 edge workers (node:cluster
// sharing the port); access logging off in nginx (the edge writes no per-request log, it only
// counts); keep-alive without a request cap on both; the same stored headers passed on (ETag,
// Cache-Control, Content-Type) plus each server's own (Date, Age/CDN-Cache against X-Cache, Server).
// nginx gets sendfile, tcp_nopush and open_file_cache (its closest match to the edge's in-memory hot
// tier). Because the machine is shared, the tables also give each server's own CPU time per request
// (from /proc, all its processes), which does not depend on how much CPU other jobs left it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { parseConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import { migrateToLatest } from '../src/core/db/migrate.ts';
import { toJson } from '../src/core/db/json.ts';
import { createOrganization } from '../src/features/identity/index.ts';
import { seedOrganizationMetadata } from '../src/features/metadata/index.ts';
import { defaultSettings } from '../src/features/cdn/edge-contract/zone-model.ts';
import { fmt, printTable } from './lib.ts';

const SECRET = 'bench-secret-key-0123456789abcdef0123';
const DURATION = process.env.CDN_BENCH_SECONDS ?? '5';
const dir = mkdtempSync(join(tmpdir(), 'tessera-cdn-bench-'));
const children: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

// --- origin (its own process would be idle during hit runs anyway: only misses reach it) ---
const originByPath = new Map<string, number>();
const objects = new Map([
  ['/20k.bin', Buffer.alloc(20 * 1024, 120)],
  ['/200k.bin', Buffer.alloc(200 * 1024, 121)],
]);
const origin = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0]!;
  originByPath.set(path, (originByPath.get(path) ?? 0) + 1);
  const body = objects.get(path) ?? (path.startsWith('/cold') ? Buffer.alloc(20 * 1024, 122) : undefined);
  if (!body) return void res.writeHead(404).end();
  const send = () =>
    res
      .writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': body.length,
        'cache-control': 'public, max-age=3600',
        etag: `"${path}"`,
      })
      .end(body);
  if (path.startsWith('/cold')) setTimeout(send, 50);
  else send();
});
await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;

// --- database with one zone ---
const dbFile = join(dir, 'tessera.sqlite');
const env = {
  TESSERA_DATA_DIR: dir,
  TESSERA_LOG_LEVEL: 'silent',
  TESSERA_SECRET_KEY: SECRET,
  DATABASE_URL: `sqlite:${dbFile}`,
  TESSERA_ALLOW_PRIVATE_TARGETS: 'true',
};
const deps = createDeps(parseConfig(env));
await migrateToLatest(deps.db);
const now = Date.now();
const org = await deps.db.transaction().execute((trx) =>
  createOrganization(
    trx,
    now,
    {
      name: 'bench',
      admin: { username: 'bench-admin', email: 'b@example.test', passwordHash: 'x' },
    },
    seedOrganizationMetadata,
  ),
);
const settings = { ...defaultSettings(), originType: 'url' as const, originUrl, hostnames: ['cdn.bench.test'] };
await deps.db
  .insertInto('cdn_zones')
  .values({
    id: 10000000001,
    org_id: org.orgId,
    name: 'bench',
    name_key: 'bench',
    region: 'de',
    enabled: 1,
    settings: toJson(settings),
    version: 1,
    created_at: now,
    updated_at: now,
  })
  .execute();
await deps.db
  .insertInto('cdn_zone_hostnames')
  .values({ hostname: 'cdn.bench.test', zone_id: 10000000001, org_id: org.orgId })
  .execute();
await deps.close();

async function startEdge(workers: number): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['src/main.ts', 'edge'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      ...env,
      EDGE_PORT: String(port),
      EDGE_HOST: '127.0.0.1',
      EDGE_WORKERS: String(workers),
      EDGE_CACHE_DIR: join(dir, `edge-${workers}`),
    },
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  // Workers start slowly on a loaded machine: wait up to a minute for a 200.
  for (let i = 0; i < 600; i++) {
    try {
      const res = await fetch(`${url}/bench/20k.bin`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`the edge exited with code ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

async function startNginx(): Promise<{ url: string; pid: number; stop(): Promise<void> } | string> {
  if (spawnSync('sh', ['-c', 'command -v nginx']).status !== 0)
    return 'nginx is not installed (apt-get install nginx-light): peer column skipped';
  const port = await freePort();
  const prefix = join(dir, 'nginx');
  mkdirSync(join(prefix, 'cache'), { recursive: true });
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  const conf = `
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 2;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log error;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on; tcp_nopush on; tcp_nodelay on;
  keepalive_requests 1000000;
  open_file_cache max=10000 inactive=60s;
  open_file_cache_valid 60s;
  proxy_cache_path ${prefix}/cache levels=1:2 keys_zone=edge:64m max_size=1g inactive=60m use_temp_path=off;
  upstream origin { server ${originUrl.replace('http://', '')}; keepalive 32; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache edge;
      proxy_cache_lock on;
      proxy_cache_use_stale updating error timeout http_500 http_502 http_503 http_504;
      proxy_cache_background_update on;
      proxy_cache_revalidate on;
      add_header X-Cache $upstream_cache_status;
    }
  }
}`;
  writeFileSync(join(prefix, 'nginx.conf'), conf);
  return startPeer(
    'nginx',
    ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-e', join(prefix, 'logs/error.log'), '-g', 'daemon off;'],
    port,
    'SIGQUIT',
    'inherit',
  );
}

async function startVarnish(): Promise<{ url: string; pid: number; stop(): Promise<void> } | string> {
  if (spawnSync('sh', ['-c', 'command -v varnishd']).status !== 0)
    return 'varnishd is not installed (apt-get install varnish): Varnish column skipped';
  const port = await freePort();
  const work = join(dir, 'varnish');
  mkdirSync(work, { recursive: true });
  // -F: foreground (the manager is our child, its cache process a grandchild: both counted for CPU).
  // varnishd -F logs its start and stop to stderr; a failed start shows as its exit code.
  const args = ['-F', '-a', `127.0.0.1:${port}`, '-b', originUrl.replace('http://', ''), '-s', 'malloc,256m'];
  return startPeer('varnishd', [...args, '-n', work, '-p', 'default_ttl=3600'], port, 'SIGTERM', 'ignore');
}

/**
 * Starts a peer cache in the foreground (a child of this process, so its CPU is counted) and waits until it
 * answers a hit for the 20 KB object (up to 20 s); a peer that exits first is a skipped column, with its code.
 */
async function startPeer(
  command: string,
  args: string[],
  port: number,
  stopSignal: NodeJS.Signals,
  stderr: 'inherit' | 'ignore',
): Promise<{ url: string; pid: number; stop(): Promise<void> } | string> {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', stderr] });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(`${url}/20k.bin`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) return `${command} exited with code ${child.exitCode}: its column skipped`;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      child.kill(stopSignal);
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** CPU time (user + system, ms) used so far by a process and all its descendants (Linux /proc). */
function cpuMs(root: number): number {
  const parent = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]!.split(' ');
      parent.set(Number(name), Number(fields[1]));
      ticks.set(Number(name), Number(fields[11]) + Number(fields[12]));
    } catch {
      // the process ended meanwhile
    }
  }
  const inTree = (pid: number): boolean => pid === root || (pid > 1 && parent.has(pid) && inTree(parent.get(pid)!));
  let total = 0;
  for (const [pid, t] of ticks) if (inTree(pid)) total += t;
  return total * 10; // USER_HZ is 100 on Linux
}

interface Wrk {
  rps: number;
  p50: number;
  p99: number;
  mbs: number;
  cpuUs: number;
}
function wrk(url: string, pid: number): Wrk {
  const cpu0 = cpuMs(pid);
  const out = spawnSync('wrk', ['-t2', '-c64', `-d${DURATION}s`, '--latency', url], { encoding: 'utf8' }).stdout;
  const cpu1 = cpuMs(pid);
  if (process.env.CDN_BENCH_DEBUG) console.log(out);
  const ms = (s: string | undefined) => {
    if (!s) return NaN;
    const m = /([\d.]+)(us|ms|s)/.exec(s);
    if (!m) return NaN;
    return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
  };
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const transfer = /Transfer\/sec:\s+([\d.]+)(KB|MB|GB)/.exec(out);
  const mbs = transfer
    ? Number(transfer[1]) * (transfer[2] === 'GB' ? 1024 : transfer[2] === 'KB' ? 1 / 1024 : 1)
    : NaN;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  return {
    rps,
    p50: ms(/50%\s+(\S+)/.exec(out)?.[1]),
    p99: ms(/99%\s+(\S+)/.exec(out)?.[1]),
    mbs,
    cpuUs: ((cpu1 - cpu0) * 1000) / requests,
  };
}

const hasWrk = spawnSync('sh', ['-c', 'command -v wrk']).status === 0;
const rows: (string | number)[][] = [];
const results = new Map<string, Wrk>();
try {
  if (!hasWrk) console.log('wrk is not installed (apt-get install wrk): throughput table skipped');
  const load = () =>
    loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
  console.log(`Load average before the run (1, 5, 15 min): ${load()} (2-core machine: compare ratios, not req/s)`);
  const nginx = await startNginx();
  if (typeof nginx === 'string') console.log(nginx);
  const varnish = await startVarnish();
  if (typeof varnish === 'string') console.log(varnish);
  const targets: [string, string, number][] = [];
  const NGINX = 'nginx proxy_cache (2 workers)';
  const VARNISH = 'Varnish malloc (threads)';
  if (typeof nginx !== 'string') targets.push([NGINX, nginx.url, nginx.pid]);
  if (typeof varnish !== 'string') targets.push([VARNISH, varnish.url, varnish.pid]);
  const edge1 = await startEdge(1);
  targets.push(['Tessera edge (1 process)', `${edge1.url}/bench`, edge1.pid]);
  const edge2 = await startEdge(2);
  targets.push(['Tessera edge (2 workers)', `${edge2.url}/bench`, edge2.pid]);
  if (hasWrk) {
    // The machine is shared: targets take turns, ROUNDS times each, and the median run counts.
    const rounds = Number(process.env.CDN_BENCH_ROUNDS ?? 3);
    const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
    for (const object of ['/20k.bin', '/200k.bin']) {
      const runs = new Map<string, Wrk[]>();
      for (const [, base] of targets)
        for (let i = 0; i < 20; i++) await (await fetch(`${base}${object}`)).arrayBuffer(); // warm every worker
      for (let round = 0; round < rounds; round++) {
        for (const [name, base, pid] of targets) {
          const list = runs.get(name) ?? [];
          list.push(wrk(`${base}${object}`, pid));
          runs.set(name, list);
        }
      }
      for (const [name] of targets) {
        const list = runs.get(name)!.sort((a, b) => a.rps - b.rps);
        const r = { ...list[Math.floor(list.length / 2)]!, cpuUs: median(list.map((x) => x.cpuUs)) };
        results.set(`${name} ${object}`, r);
        rows.push([
          object === '/20k.bin' ? '20 KB' : '200 KB',
          name,
          fmt(r.rps, 0),
          fmt(r.mbs, 0),
          fmt(r.p50),
          fmt(r.p99),
          fmt(r.cpuUs, 0),
          list.map((x) => fmt(x.rps, 0)).join(' / '),
        ]);
      }
    }
    printTable(
      `Cache hits, wrk -t2 -c64 -d${DURATION}s, median of alternating runs (same machine, same run)`,
      ['Object', 'Server', 'req/s', 'MB/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'all runs req/s'],
      rows,
    );
    console.log(`Load average after the throughput runs (1, 5, 15 min): ${load()}`);
    // Issue 30's targets: 2 workers against nginx's 2 workers, ≥ 0.9× at 20 KB and ≥ 1.0× at 200 KB.
    const TARGET: Record<string, number> = { '20k.bin': 0.9, '200k.bin': 1.0 };
    const ratioTable = (peer: string, title: string, withTarget: boolean) => {
      const line = (object: string, edge: string, label: string) => {
        const e = results.get(`Tessera edge (${edge}) /${object}`)!;
        const n = results.get(`${peer} /${object}`)!;
        const ratio = e.rps / n.rps;
        const row = [
          label,
          edge,
          fmt(ratio),
          fmt(e.p99 / n.p99),
          fmt(e.cpuUs, 0),
          fmt(n.cpuUs, 0),
          fmt(n.cpuUs / e.cpuUs),
        ];
        row.push(
          withTarget && edge === '2 workers'
            ? `≥ ${TARGET[object]!.toFixed(1)}×: ${ratio >= TARGET[object]! ? 'met' : 'NOT met'}`
            : '',
        );
        return row;
      };
      printTable(
        title,
        [
          'Object',
          'Tessera edge',
          'req/s ratio',
          'p99 ratio (lower is better)',
          'edge CPU µs/hit',
          'peer CPU µs/hit',
          'CPU efficiency ratio',
          'target (2 workers)',
        ],
        [
          line('20k.bin', '2 workers', '20 KB'),
          line('200k.bin', '2 workers', '200 KB'),
          line('20k.bin', '1 process', '20 KB'),
          line('200k.bin', '1 process', '200 KB'),
        ],
        {
          'edge CPU µs/hit': "CPU time (user + system) of all the edge's processes per cache hit, in microseconds",
          'peer CPU µs/hit':
            "the same for the peer's processes (nginx master + workers, or varnishd and its cache process)",
          'target (2 workers)':
            "the goal for the req/s ratio of 2 edge workers against nginx's 2 workers (empty against other peers)",
        },
      );
    };
    if (typeof nginx !== 'string')
      ratioTable(NGINX, 'Tessera / nginx (target: ≥ 0.9× at 20 KB, ≥ 1.0× at 200 KB, 2 workers each)', true);
    if (typeof varnish !== 'string')
      ratioTable(VARNISH, 'Tessera / Varnish (no target: the other engine the edge could have driven)', false);
  }

  // Cold object, 1,000 concurrent requests.
  const coldRows: (string | number)[][] = [];
  const agent = new Agent({ connections: 1000, pipelining: 0 });
  const cold = async (name: string, url: string) => {
    const path = new URL(url).pathname.replace(/^\/bench/, '');
    const started = performance.now();
    const statuses = await Promise.all(
      Array.from({ length: 1000 }, async () => {
        const res = await request(url, { dispatcher: agent });
        await res.body.arrayBuffer();
        return res.statusCode;
      }),
    );
    coldRows.push([
      name,
      statuses.filter((s) => s === 200).length,
      originByPath.get(path) ?? 0,
      fmt(performance.now() - started, 0),
    ]);
  };
  await cold('Tessera edge (1 process)', `${edge1.url}/bench/cold-1`);
  if (typeof nginx !== 'string') await cold('nginx proxy_cache_lock on', `${nginx.url}/cold-2`);
  await agent.close();
  printTable(
    '1,000 concurrent cold requests for one object (origin answers after 50 ms)',
    ['Server', '200 responses', 'origin fetches', 'all done ms'],
    coldRows,
  );
  await edge1.stop();
  await edge2.stop();
  if (typeof nginx !== 'string') await nginx.stop();
  if (typeof varnish !== 'string') await varnish.stop();
} finally {
  // SIGTERM, not SIGKILL: a killed nginx master would leave its workers running.
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  origin.close();
  origin.closeAllConnections();
  rmSync(dir, { recursive: true, force: true });
}
