// CDN edge benchmark: cache-hit requests/s and latency for a 20 KB and a 200 KB object through the
// Tessera edge (`tessera edge`, 1 process and 2 workers) against nginx proxy_cache (Debian package,
// 2 workers, on-disk cache, sendfile) in front of the same origin, measured with wrk in one run.
// Varnish Cache (Debian package, malloc storage, its default thread pools) is a second peer when
// installed: the other cache engine the edge could have driven as its hit path (decision 0010).
// Then 1,000 concurrent cold requests for one object → origin fetch count.
//
// Equivalence: same origin, same wrk load, 2 nginx workers against 2 edge workers (node:cluster
// sharing the port). The target pair has each server's workers pinned one per core by the server's
// own setting (nginx `worker_cpu_affinity auto`, the edge's EDGE_CPU_AFFINITY=auto; decision 0034:
// unpinned, the kernel at times kept both edge workers on one core with the other idle); the same
// pair unpinned is measured beside it.
// A bare node:net server (bench/cdn-floor-server.ts: 2 pinned workers, one prebuilt answer per request)
// is Node's floor for a hit on this machine, measured in the same rounds. CDN_BENCH_PINNED_ONLY=1 runs
// only the pinned servers' rounds (half the time); CDN_BENCH_ROUNDS (5) and CDN_BENCH_SECONDS (4) set the rest.
// wrk is never pinned (its two threads go where the kernel puts them, for every server alike); access logging off in nginx (the edge writes no per-request log, it only
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
const DURATION = process.env.CDN_BENCH_SECONDS ?? '4';
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

async function startEdge(
  workers: number,
  affinity: 'off' | 'auto' = 'off',
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['src/main.ts', 'edge'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      ...env,
      EDGE_PORT: String(port),
      EDGE_HOST: '127.0.0.1',
      EDGE_WORKERS: String(workers),
      EDGE_CPU_AFFINITY: affinity,
      EDGE_CACHE_DIR: join(dir, `edge-${workers}-${affinity}`),
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

/** bench/cdn-floor-server.ts: 2 pinned node:cluster workers answering a prebuilt response (Node's floor for a hit). */
async function startNodeFloor(): Promise<{ url: string; pid: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['bench/cdn-floor-server.ts', String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let ready = 0;
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      ready += d.toString().split('ready').length - 1;
      if (ready >= 2) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the Node floor server exited with code ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid! };
}

async function startNginx(pinned: boolean): Promise<{ url: string; pid: number; stop(): Promise<void> } | string> {
  if (spawnSync('sh', ['-c', 'command -v nginx']).status !== 0)
    return 'nginx is not installed (apt-get install nginx-light): peer column skipped';
  const port = await freePort();
  const prefix = join(dir, pinned ? 'nginx-pinned' : 'nginx');
  mkdirSync(join(prefix, 'cache'), { recursive: true });
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  const conf = `
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 2;
${pinned ? 'worker_cpu_affinity auto;' : ''}
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
  /** wrk's own CPU time per request (µs): the load generator's share of the same two cores. */
  wrkUs: number;
  /** Share of the machine's CPU time left idle during the run (%), from /proc/stat. */
  idle: number;
}
/** The machine's CPU time counters (user, nice, system, idle, …) from /proc/stat. */
function machineTicks(): number[] {
  return readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
}
function wrk(url: string, pid: number, seconds = DURATION): Wrk {
  const cpu0 = cpuMs(pid);
  const ticks0 = machineTicks();
  // `times` after wrk prints the CPU time of the shell's children: wrk's own user and system time.
  const out = spawnSync('sh', ['-c', `wrk -t2 -c64 -d${seconds}s --latency '${url}'; times`], {
    encoding: 'utf8',
  }).stdout;
  const cpu1 = cpuMs(pid);
  const ticks = machineTicks().map((t, i) => t - ticks0[i]!);
  const children = out.trim().split('\n').pop()!.split(/\s+/);
  const seconds_ = (t: string | undefined) => {
    const m = /(\d+)m([\d.]+)s/.exec(t ?? '');
    return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  };
  const wrkCpu = seconds_(children[0]) + seconds_(children[1]);
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
    wrkUs: (wrkCpu * 1e6) / requests,
    idle: (100 * ticks[3]!) / ticks.reduce((a, b) => a + b, 0),
  };
}

const hasWrk = spawnSync('sh', ['-c', 'command -v wrk']).status === 0;
const rows: (string | number)[][] = [];
const results = new Map<string, Wrk>();
/** Per object, the req/s ratio of each pair (edge ÷ nginx, run next to each other in the same round). */
const pairRatios = new Map<string, number[]>();
const median = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
/** A GET that survives a keep-alive connection the server closed just as it was reused (nginx's idle timeout). */
async function warmFetch(url: string): Promise<void> {
  try {
    await (await fetch(url)).arrayBuffer();
  } catch {
    await (await fetch(url)).arrayBuffer();
  }
}
try {
  if (!hasWrk) console.log('wrk is not installed (apt-get install wrk): throughput table skipped');
  const load = () =>
    loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
  console.log(`Load average before the run (1, 5, 15 min): ${load()} (2-core machine: compare ratios, not req/s)`);
  const nginxPinned = await startNginx(true);
  if (typeof nginxPinned === 'string') console.log(nginxPinned);
  const nginx = await startNginx(false);
  const varnish = await startVarnish();
  if (typeof varnish === 'string') console.log(varnish);
  const targets: [string, string, number][] = [];
  const NGINX_PINNED = 'nginx proxy_cache (2 workers, pinned)';
  const NGINX = 'nginx proxy_cache (2 workers)';
  const VARNISH = 'Varnish malloc (threads)';
  const EDGE_PINNED = 'Tessera edge (2 workers, pinned)';
  const NODE_FLOOR = 'bare node:net, prebuilt answer (2 workers, pinned)';
  const EDGE = 'Tessera edge (2 workers)';
  const EDGE_ONE = 'Tessera edge (1 process)';
  // Pairs side by side (each edge right after its nginx): drift in the machine's other load hits both alike.
  if (typeof nginxPinned !== 'string') targets.push([NGINX_PINNED, nginxPinned.url, nginxPinned.pid]);
  const edgePinned = await startEdge(2, 'auto');
  targets.push([EDGE_PINNED, `${edgePinned.url}/bench`, edgePinned.pid]);
  // Node's floor for a hit: no parsing, routing or lookup, one prebuilt answer per request.
  const nodeFloor = await startNodeFloor();
  targets.push([NODE_FLOOR, nodeFloor.url, nodeFloor.pid]);
  // CDN_BENCH_PINNED_ONLY=1: only the pinned servers take turns (the targets' pairs and Node's floor).
  const pinnedOnly = process.env.CDN_BENCH_PINNED_ONLY === '1';
  if (typeof nginx !== 'string' && !pinnedOnly) targets.push([NGINX, nginx.url, nginx.pid]);
  const edge2 = await startEdge(2);
  if (!pinnedOnly) targets.push([EDGE, `${edge2.url}/bench`, edge2.pid]);
  if (typeof varnish !== 'string' && !pinnedOnly) targets.push([VARNISH, varnish.url, varnish.pid]);
  const edge1 = await startEdge(1);
  if (!pinnedOnly) targets.push([EDGE_ONE, `${edge1.url}/bench`, edge1.pid]);
  const pairs: [string, string][] = [
    [EDGE_PINNED, NGINX_PINNED],
    [NODE_FLOOR, NGINX_PINNED],
    [EDGE_PINNED, NODE_FLOOR],
    [EDGE, NGINX],
    [EDGE, VARNISH],
  ];
  if (hasWrk) {
    // The machine is shared: targets take turns, ROUNDS times each, in forward then reverse order (no
    // target always runs first or after the same neighbour), and the median run counts.
    const rounds = Number(process.env.CDN_BENCH_ROUNDS ?? 5);
    for (const object of ['/20k.bin', '/200k.bin']) {
      const runs = new Map<string, Wrk[]>();
      // Warm every worker (JIT, caches, open files): requests, then one second of load per target.
      for (const [, base] of targets) for (let i = 0; i < 20; i++) await warmFetch(`${base}${object}`);
      for (const [, base, pid] of targets) wrk(`${base}${object}`, pid, '1');
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? targets : [...targets].reverse();
        for (const [name, base, pid] of order) {
          const list = runs.get(name) ?? [];
          list.push(wrk(`${base}${object}`, pid));
          runs.set(name, list);
        }
      }
      for (const [edge, peer] of pairs) {
        const e = runs.get(edge);
        const n = runs.get(peer);
        if (e && n)
          pairRatios.set(
            `${edge} ${peer} ${object}`,
            e.map((r, k) => r.rps / n[k]!.rps),
          );
      }
      for (const [name] of targets) {
        const list = runs.get(name)!;
        const byRps = [...list].sort((a, b) => a.rps - b.rps);
        const r = {
          ...byRps[Math.floor(list.length / 2)]!,
          rps: median(list.map((x) => x.rps)),
          cpuUs: median(list.map((x) => x.cpuUs)),
          wrkUs: median(list.map((x) => x.wrkUs)),
          idle: median(list.map((x) => x.idle)),
        };
        results.set(`${name} ${object}`, r);
        rows.push([
          object === '/20k.bin' ? '20 KB' : '200 KB',
          name,
          fmt(r.rps, 0),
          fmt(r.mbs, 0),
          fmt(r.p50),
          fmt(r.p99),
          fmt(r.cpuUs, 0),
          fmt(r.wrkUs, 0),
          fmt(r.idle, 0),
          list.map((x) => fmt(x.rps, 0)).join(' / '),
        ]);
      }
    }
    printTable(
      `Cache hits, wrk -t2 -c64 -d${DURATION}s, median of ${rounds} alternating runs (same machine, same run)`,
      [
        'Object',
        'Server',
        'req/s',
        'MB/s',
        'p50 ms',
        'p99 ms',
        'CPU µs/req',
        'wrk CPU µs/req',
        'idle %',
        'all runs req/s',
      ],
      rows,
      {
        'wrk CPU µs/req': "the load generator's own CPU time (user + system) per request, in microseconds",
        'idle %': 'share of the two cores left idle during the runs (median, from /proc/stat)',
      },
    );
    console.log(`Load average after the throughput runs (1, 5, 15 min): ${load()}`);
    // The targets: 2 workers against nginx's 2 workers, ≥ 0.9× at 20 KB and ≥ 1.0× at 200 KB.
    const TARGET: Record<string, number> = { '20k.bin': 0.9, '200k.bin': 1.0 };
    const ratioTable = (title: string, lines: [string, string, string, boolean][]) => {
      const line = ([object, edge, peer, withTarget]: [string, string, string, boolean]) => {
        const e = results.get(`${edge} /${object}`)!;
        const n = results.get(`${peer} /${object}`)!;
        const paired = pairRatios.get(`${edge} ${peer} /${object}`);
        const ratio = paired ? median(paired) : e.rps / n.rps;
        return [
          object === '20k.bin' ? '20 KB' : '200 KB',
          edge.replace('Tessera edge ', ''),
          peer,
          fmt(ratio),
          paired ? paired.map((x) => fmt(x)).join(' / ') : '—',
          fmt(e.p99 / n.p99),
          fmt(e.cpuUs, 0),
          fmt(n.cpuUs, 0),
          fmt(n.cpuUs / e.cpuUs),
          withTarget ? `≥ ${TARGET[object]!.toFixed(1)}×: ${ratio >= TARGET[object]! ? 'met' : 'NOT met'}` : '',
        ];
      };
      printTable(
        title,
        [
          'Object',
          'Tessera edge',
          'peer',
          'req/s ratio',
          'each round',
          'p99 ratio (lower is better)',
          'edge CPU µs/hit',
          'peer CPU µs/hit',
          'CPU efficiency ratio',
          'target (pinned pair)',
        ],
        lines
          .filter(([object, edge, peer]) => results.has(`${edge} /${object}`) && results.has(`${peer} /${object}`))
          .map(line),
        {
          peer: 'the server the edge is compared with',
          'each round':
            "edge ÷ peer req/s of each round (the two ran next to each other); the req/s ratio is these rounds' median",
          'edge CPU µs/hit': "CPU time (user + system) of all the edge's processes per cache hit, in microseconds",
          'peer CPU µs/hit':
            "the same for the peer's processes (nginx master + workers, or varnishd and its cache process)",
          'target (pinned pair)':
            "the goal for 2 edge workers against nginx's 2 workers, each server's workers pinned one per core by its own setting",
        },
      );
    };
    const nginxLines: [string, string, string, boolean][] = [];
    for (const object of ['20k.bin', '200k.bin']) {
      nginxLines.push([object, EDGE_PINNED, NGINX_PINNED, true]);
      nginxLines.push([object, NODE_FLOOR, NGINX_PINNED, false]);
      nginxLines.push([object, EDGE_PINNED, NODE_FLOOR, false]);
      nginxLines.push([object, EDGE, NGINX, false]);
      nginxLines.push([object, EDGE_ONE, NGINX, false]);
    }
    ratioTable('Tessera / nginx (target: ≥ 0.9× at 20 KB, ≥ 1.0× at 200 KB, 2 pinned workers each)', nginxLines);
    if (typeof varnish !== 'string')
      ratioTable(
        'Tessera / Varnish (no target: the other engine the edge could have driven)',
        ['20k.bin', '200k.bin'].flatMap((object) => [
          [object, EDGE, VARNISH, false] as [string, string, string, boolean],
          [object, EDGE_ONE, VARNISH, false] as [string, string, string, boolean],
        ]),
      );
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
  await edgePinned.stop();
  if (typeof nginx !== 'string') await nginx.stop();
  if (typeof nginxPinned !== 'string') await nginxPinned.stop();
  if (typeof varnish !== 'string') await varnish.stop();
} finally {
  // SIGTERM, not SIGKILL: a killed nginx master would leave its workers running.
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  origin.close();
  origin.closeAllConnections();
  rmSync(dir, { recursive: true, force: true });
}
