// Server memory: the process `npm start` runs (its command line and flags, read from package.json),
// on a fresh data directory (and a fresh PostgreSQL database), for each engine. Idle RSS is read
// from /proc/<pid>/status once /healthz answers and the server has been left alone for
// BENCH_SETTLE_SECONDS (default 10); then authenticated GET /v1/user and GET /healthz run at 32
// connections for BENCH_SECONDS and the highest RSS seen is reported, with the RSS afterwards.
// Run: `npm run bench -- memory` (BENCH_ENGINES=sqlite,postgres).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createPgDatabase } from '../test/helpers/engines.ts';
import { freePort } from '../test/helpers/net.ts';
import { fmt, printTable } from './lib.ts';

const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',');
const SETTLE = Number(process.env.BENCH_SETTLE_SECONDS ?? 10);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const TARGET_MIB = 120;
const PASSWORD = 'bench correct horse battery';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function status(pid: number): { rss: number; anon: number; file: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN) / 1024;
  return { rss: kib('VmRSS'), anon: kib('RssAnon'), file: kib('RssFile') };
}

async function start(engine: string): Promise<{ url: string; child: ChildProcess; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-bench-mem-'));
  const pg = engine === 'postgres' ? await createPgDatabase() : undefined;
  const port = await freePort();
  const script = (
    JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }
  ).scripts.start.split(/\s+/);
  if (script[0] !== 'node') throw new Error(`unexpected start script: ${script.join(' ')}`);
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    TESSERA_DATA_DIR: dataDir,
    TESSERA_LOG_LEVEL: 'warn',
    TESSERA_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123',
    TESSERA_ADMIN_USERNAME: 'bench-admin',
    TESSERA_ADMIN_PASSWORD: PASSWORD,
  };
  if (pg) env.DATABASE_URL = pg.url;
  else delete env.DATABASE_URL;
  const child = spawn(process.execPath, script.slice(1), { stdio: ['ignore', 'ignore', 'inherit'], env });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (
    !(await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('server did not start');
    await sleep(50);
  }
  return {
    url,
    child,
    async close() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** CONNECTIONS keep-alive connections requesting `path` for `seconds`; returns requests/s. */
async function load(url: string, path: string, headers: Record<string, string>, seconds: number): Promise<number> {
  const agent = new Agent({ connections: 32 });
  let count = 0;
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (Date.now() < end) {
        const res = await request(`${url}${path}`, { headers, dispatcher: agent });
        await res.body.dump();
        count += 1;
      }
    }),
  );
  await agent.close();
  return count / seconds;
}

const rows: (string | number)[][] = [];
for (const engine of ENGINES) {
  const server = await start(engine);
  try {
    const pid = server.child.pid!;
    await sleep(SETTLE * 1000);
    const idle = status(pid);
    const session = (await (
      await fetch(`${server.url}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'bench-admin', password: PASSWORD }),
      })
    ).json()) as { session: { accessToken: string } };
    let peak = idle.rss;
    const sampler = setInterval(() => {
      peak = Math.max(peak, status(pid).rss);
    }, 100);
    await load(server.url, '/healthz', {}, SECONDS / 2);
    await load(server.url, '/v1/user', { accesstoken: session.session.accessToken }, SECONDS);
    clearInterval(sampler);
    await sleep(1000);
    const after = status(pid);
    rows.push([
      engine,
      fmt(idle.rss, 1),
      fmt(idle.anon, 1),
      fmt(idle.file, 1),
      fmt(peak, 1),
      fmt(after.rss, 1),
      `≤ ${TARGET_MIB}`,
      idle.rss <= TARGET_MIB ? 'met' : 'not met',
    ]);
  } finally {
    await server.close();
  }
}

printTable(
  `Resident memory of the npm start process (MiB), fresh data directory, idle ${SETTLE} s after /healthz first answered; load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')}`,
  [
    'database',
    'idle RSS',
    'idle anonymous',
    'idle file-backed',
    'peak under load',
    'after load',
    'target idle RSS',
    'idle target',
  ],
  rows,
  {
    'idle RSS': 'resident memory (VmRSS) of the server process, idle, before any request',
    'idle anonymous': 'the part of idle RSS that is private memory (V8 heap, native allocations)',
    'idle file-backed':
      'the part of idle RSS mapped from files (the node binary, native add-ons), shared with other processes',
    'peak under load': `highest RSS sampled while GET /healthz then GET /v1/user (access token) ran at 32 connections`,
    'after load': 'RSS one second after the load stopped',
    'target idle RSS': 'the goal for idle RSS',
    'idle target': 'whether idle RSS meets the goal',
  },
);
process.exit(0);
