// Directus 12.4.0 as a peer in the same run (bench/assets-thumbnail.bench.ts): found at
// TESSERA_BENCH_DIRECTUS_DIR or /work/peers/directus (an npm project outside the repository with
// directus@12.4.0 installed, see docs/performance.md), started fresh on SQLite and local disk in a
// temporary folder, with the Node that runs the bench. Nothing of Directus is in the repository.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const DIRECTUS_VERSION = '12.4.0';
const DEFAULT_DIR = '/work/peers/directus';

/** How to install it, printed when it is absent. */
export const DIRECTUS_INSTALL = `mkdir -p ${DEFAULT_DIR} && cd ${DEFAULT_DIR} && npm init -y && npm install directus@${DIRECTUS_VERSION} (or set TESSERA_BENCH_DIRECTUS_DIR to such a folder)`;

export interface DirectusPeer {
  url: string;
  /** POST /files (multipart): the file's id; answered after Directus wrote it (it does not fsync). */
  upload(bytes: Buffer, filename: string, type: string): Promise<string>;
  /** GET /assets/{id} as a 200-pixel thumbnail (Directus draws it at the first request): the status. */
  thumbnail(id: string): Promise<number>;
  stop(): Promise<void>;
}

/** The installed Directus' CLI, or why there is none. */
export function findDirectus(): { cli: string } | { missing: string } {
  const dir = process.env.TESSERA_BENCH_DIRECTUS_DIR ?? DEFAULT_DIR;
  const pkg = join(dir, 'node_modules', 'directus', 'package.json');
  if (!existsSync(pkg)) return { missing: `not installed at ${dir}` };
  const version = (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
  if (version !== DIRECTUS_VERSION) return { missing: `${dir} holds directus ${version}, not ${DIRECTUS_VERSION}` };
  return { cli: join(dir, 'node_modules', 'directus', 'cli.js') };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function run(cli: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): ChildProcess {
  return spawn(process.execPath, [cli, ...args], { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function exited(child: ChildProcess, what: string): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (c) => (stderr += c));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${what} exited (${code}): ${stderr.slice(-2000)}`)),
    ),
  );
}

/** A fresh Directus (its own SQLite file and upload folder), bootstrapped and listening. */
export async function startDirectus(cli: string): Promise<DirectusPeer> {
  const home = mkdtempSync(join(tmpdir(), 'directus-peer-'));
  const port = await freePort();
  const token = `bench-${Math.random().toString(36).slice(2)}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DB_CLIENT: 'sqlite3',
    DB_FILENAME: join(home, 'data.db'),
    STORAGE_LOCATIONS: 'local',
    STORAGE_LOCAL_DRIVER: 'local',
    STORAGE_LOCAL_ROOT: join(home, 'uploads'),
    EXTENSIONS_PATH: join(home, 'extensions'),
    SECRET: `secret-${token}`,
    ADMIN_EMAIL: 'bench@example.com',
    ADMIN_PASSWORD: 'bench-password',
    ADMIN_TOKEN: token,
    TELEMETRY: 'false',
    LOG_LEVEL: 'warn',
    RATE_LIMITER_ENABLED: 'false',
    // Its event-loop-lag guard answers 503 on a busy machine: off, so every upload is measured.
    PRESSURE_LIMITER_ENABLED: 'false',
    CACHE_ENABLED: 'false',
    WEBSOCKETS_ENABLED: 'false',
  };
  await exited(run(cli, ['bootstrap'], env, home), 'directus bootstrap');
  const server = run(cli, ['start'], env, home);
  const failed = exited(server, 'directus start');
  failed.catch(() => {});
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ok = await fetch(`${url}/server/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (server.exitCode !== null) await failed;
    if (Date.now() > deadline) throw new Error('Directus did not answer /server/ping within 120 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  const auth = { authorization: `Bearer ${token}` };
  return {
    url,
    async upload(bytes, filename, type) {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(bytes)], { type }), filename);
      const res = await fetch(`${url}/files`, { method: 'POST', headers: auth, body: form });
      const body = (await res.json()) as { data?: { id: string } };
      if (res.status !== 200 || !body.data) throw new Error(`Directus upload: ${res.status} ${JSON.stringify(body)}`);
      return body.data.id;
    },
    async thumbnail(id) {
      const res = await fetch(`${url}/assets/${id}?width=200&height=200&fit=inside`, { headers: auth });
      await res.arrayBuffer();
      return res.status;
    },
    async stop() {
      server.kill('SIGTERM');
      await failed.catch(() => {});
      rmSync(home, { recursive: true, force: true });
    },
  };
}
