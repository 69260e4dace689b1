// Lean start: the server `npm start` runs loads only what serving requests needs. Heavy modules
// (image processing, S3, mail, HTML sanitising, GeoIP, the CDN optimizer, the HTTP client for
// webhooks, TypeBox's compiler, the other engine's driver, Node's own type stripper) load on first
// use. A real server process on a fresh data directory reports every module it has loaded, through a
// preload that only observes (no timing, no memory figures: those are in `npm run bench -- memory`).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createPgDatabase, postgresProblem } from './helpers/engines.ts';
import { freePort } from './helpers/net.ts';

// Records the URL of every module imported or required, and Node's list of its own internal
// modules, on request. (Resolution, not loading, is observed: the TypeScript loader answers loads.)
const OBSERVER = `
import { registerHooks } from 'node:module';
const loaded = [];
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); loaded.push(r.url); return r; } });
process.on('message', () => process.send({ loaded, builtins: process.moduleLoadList }));
`;

/** Modules that must not be loaded by an idle server, with why they would be needed. */
const LAZY: Record<string, RegExp> = {
  'sharp / libvips (images: renditions, adaptive templates)': /node_modules\/(sharp|@img)\//,
  'the AWS SDK (S3 storage)': /node_modules\/@aws-sdk\//,
  'maxmind and the GeoIP database (the CDN edge)': /node_modules\/(maxmind|@ip-location-db)\//,
  'esbuild and lightningcss (the CDN edge optimizer)': /node_modules\/(esbuild|lightningcss)\//,
  'nodemailer (sharing assets by mail)': /node_modules\/nodemailer\//,
  'sanitize-html (storyboard rich text)': /node_modules\/(sanitize-html|htmlparser2|postcss)\//,
  'undici (webhook delivery)': /node_modules\/undici\//,
  "TypeBox's compiler (command-line tools)": /node_modules\/typebox\/build\/compile\//,
  'the command-line tools': /\/src\/cli\.ts$/,
  'the CDN edge server': /\/src\/features\/cdn\/edge\//,
};

interface Report {
  loaded: string[];
  builtins: string[];
}

async function serve(
  env: Record<string, string>,
): Promise<{ output(): string; report(): Promise<Report>; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-lean-'));
  const observer = join(dir, 'observer.mjs');
  writeFileSync(observer, OBSERVER);
  const port = await freePort();
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    TESSERA_LOG_LEVEL: 'warn',
    ...env,
    TESSERA_DATA_DIR: join(dir, 'data'),
    PORT: String(port),
    HOST: '127.0.0.1',
    TESSERA_ADMIN_USERNAME: 'lean-admin',
    TESSERA_ADMIN_PASSWORD: 'lean start passphrase',
  };
  if (!env.DATABASE_URL) delete childEnv.DATABASE_URL;
  // What `npm start` runs, with the observer preloaded.
  const child: ChildProcess = spawn(
    process.execPath,
    ['--max-semi-space-size=2', '--import', observer, 'bin/tessera.mjs', 'serve'],
    { env: childEnv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    output: () => out,
    report: () =>
      new Promise<Report>((resolve) => {
        child.once('message', (m) => resolve(m as Report));
        child.send('report');
      }),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function assertLean(report: Report, otherDriver: RegExp): void {
  assert.ok(
    report.loaded.some((u) => u.endsWith('/src/app.ts')),
    'the observer saw the app load',
  );
  for (const [what, pattern] of Object.entries(LAZY)) {
    const hit = report.loaded.find((u) => pattern.test(u));
    assert.equal(hit, undefined, `${what} was loaded at start: ${hit}`);
  }
  const driver = report.loaded.find((u) => otherDriver.test(u));
  assert.equal(driver, undefined, `the other engine's driver was loaded: ${driver}`);
  // Types were stripped ahead of time (bin/typescript-cache.mjs): Node's stripper never loaded.
  assert.equal(
    report.builtins.find((m) => m.includes('amaro')),
    undefined,
    "Node's type stripper was loaded",
  );
}

describe('npm start loads heavy modules only when first needed', () => {
  const servers: { stop(): Promise<void> }[] = [];
  after(async () => {
    for (const s of servers) await s.stop();
  });

  it('on SQLite', async () => {
    const server = await serve({});
    servers.push(server);
    assertLean(await server.report(), /node_modules\/(pg|pg-pool|pg-protocol)\//);
  });

  it('on PostgreSQL', async (t) => {
    const problem = await postgresProblem();
    if (problem) return t.skip(problem);
    const pg = await createPgDatabase();
    const server = await serve({ DATABASE_URL: pg.url });
    servers.push({
      stop: async () => {
        await server.stop();
        await pg.drop();
      },
    });
    assertLean(await server.report(), /node_modules\/better-sqlite3\//);
  });
});

describe('npm start frees its start-up garbage once it listens', () => {
  it('runs one full collection a second after it listens (the idle RSS it saves is in the memory bench)', async () => {
    const server = await serve({ TESSERA_LOG_LEVEL: 'debug' });
    try {
      const deadline = Date.now() + 30_000;
      let line: string | undefined;
      while (
        !(line = server
          .output()
          .split('\n')
          .find((l) => l.includes('start-up garbage collected')))
      ) {
        assert.ok(Date.now() < deadline, `no start-up collection was logged:\n${server.output().slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const {
        heapUsedMiB: [before, after],
      } = JSON.parse(line) as { heapUsedMiB: [number, number] };
      assert.ok(after <= before, `heap used ${before} MiB before, ${after} MiB after`);
    } finally {
      await server.stop();
    }
  });
});
