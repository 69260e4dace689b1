// First run and start-up failures, as a new user meets them: a real process, real files, real ports.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from './helpers/net.ts';
import { createPgDatabase, engines } from './helpers/engines.ts';
import pg from 'pg';
import Sqlite from 'better-sqlite3';

function baseEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TESSERA_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    TESSERA_LOG_LEVEL: 'info',
    ...extra,
  };
  delete env.DATABASE_URL;
  delete env.TESSERA_ADMIN_PASSWORD;
  delete env.TESSERA_ADMIN_USERNAME;
  delete env.TESSERA_SECRET_KEY;
  return { ...env, ...extra };
}

async function startServer(
  env: Record<string, string | undefined>,
  port: number,
): Promise<{ child: ChildProcess; stdout: () => string; stderr: () => string }> {
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start:\n${out}\n${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, stdout: () => out, stderr: () => err };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Runs `serve` expecting it to fail; returns its exit code and output. */
async function failingStart(
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

function assertOneLine(stderr: string, pattern: RegExp, setting: string): void {
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line, got:\n${stderr}`);
  assert.match(lines[0]!, pattern);
  assert.match(lines[0]!, new RegExp(`\\(${setting}\\)`));
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
}

describe('first run with TESSERA_LOG_LEVEL=error', () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'tessera-first-')), 'data');
  after(() => rmSync(join(dataDir, '..'), { recursive: true, force: true }));

  it('shows the generated credentials on stderr and in a 0600 file; the data directory is 0700; reset-password is the way back in', async () => {
    const port = await freePort();
    const env = baseEnv(dataDir, { PORT: String(port), TESSERA_LOG_LEVEL: 'error' });
    const server = await startServer(env, port);
    let password: string;
    try {
      const shown = /generated password (\S+)/.exec(server.stderr());
      assert.ok(shown, `stderr shows the password:\n${server.stderr()}`);
      password = shown[1]!;
      const file = join(dataDir, 'first-run-credentials.txt');
      assert.match(server.stderr(), new RegExp(file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'stderr names the file');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.match(readFileSync(file, 'utf8'), new RegExp(`password=${password}`));
      assert.equal(statSync(dataDir).mode & 0o777, 0o700);
      for (const name of ['tessera.sqlite', 'secret.key'])
        assert.equal(statSync(join(dataDir, name)).mode & 0o077, 0, `${name} is private`);
      const signIn = await fetch(`http://127.0.0.1:${port}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password }),
      });
      assert.equal(signIn.status, 200);
    } finally {
      await stop(server.child);
    }
    // Lost the password: reset it from the server's shell.
    const reset = spawnSync(
      process.execPath,
      ['bin/tessera.mjs', 'user', 'reset-password', '--username', 'admin', '--password', 'a brand new passphrase'],
      { env, encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(reset.status, 0, reset.stderr);
    assert.match(reset.stdout, /reset/);
    const generated = spawnSync(
      process.execPath,
      ['bin/tessera.mjs', 'user', 'reset-password', '--username', 'ADMIN'],
      { env, encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(generated.status, 0, generated.stderr);
    const newPassword = /New password: (\S+)/.exec(generated.stdout)?.[1];
    assert.ok(newPassword, generated.stdout);
    const again = await startServer(env, port);
    try {
      const signIn = (body: object) =>
        fetch(`http://127.0.0.1:${port}/v1/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      assert.equal((await signIn({ username: 'admin', password })).status, 401);
      assert.equal((await signIn({ username: 'admin', password: newPassword })).status, 200);
      assert.doesNotMatch(again.stderr(), /generated password/, 'no second first run');
    } finally {
      await stop(again.child);
    }
    const unknown = spawnSync(process.execPath, ['bin/tessera.mjs', 'user', 'reset-password', '--username', 'nobody'], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /no user "nobody"/);
  });
});

describe('start-up failures: one line naming the cause and the setting, exit code 2', () => {
  const root = mkdtempSync(join(tmpdir(), 'tessera-fail-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('port in use (before any first-run side effect)', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const dataDir = join(root, 'busy');
    try {
      const res = await failingStart(baseEnv(dataDir, { PORT: String(port) }));
      assert.equal(res.code, 2, res.stderr);
      assertOneLine(res.stderr, new RegExp(`port ${port}.*in use`), 'PORT');
      assert.ok(!existsSync(join(dataDir, 'tessera.sqlite')), 'no database was created');
      assert.ok(!existsSync(join(dataDir, 'first-run-credentials.txt')));
    } finally {
      blocker.close();
    }
  });

  it('database unreachable', async () => {
    const res = await failingStart(
      baseEnv(join(root, 'pg'), {
        PORT: String(await freePort()),
        DATABASE_URL: 'postgres://tessera:hunter2@127.0.0.1:1/tessera',
      }),
    );
    assert.equal(res.code, 2, res.stderr);
    assertOneLine(res.stderr, /cannot reach the database/, 'DATABASE_URL');
    assert.doesNotMatch(res.stderr, /hunter2/, 'the password is not shown');
  });

  it('data directory is a file, or not writable', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    const notDir = await failingStart(baseEnv(file, { PORT: String(await freePort()) }));
    assert.equal(notDir.code, 2, notDir.stderr);
    assertOneLine(notDir.stderr, /is not a directory/, 'TESSERA_DATA_DIR');
    const readOnly = await failingStart(baseEnv('/proc', { PORT: String(await freePort()) }));
    assert.equal(readOnly.code, 2, readOnly.stderr);
    assertOneLine(readOnly.stderr, /not writable/, 'TESSERA_DATA_DIR');
  });

  it('bad HOST', async () => {
    const res = await failingStart(baseEnv(join(root, 'host'), { PORT: String(await freePort()), HOST: '192.0.2.1' }));
    assert.equal(res.code, 2, res.stderr);
    assertOneLine(res.stderr, /192\.0\.2\.1/, 'HOST');
    assert.ok(!existsSync(join(root, 'host', 'tessera.sqlite')));
  });
});

describe('start-up failures: a secret key other than the database was initialised with', async () => {
  const KEY_A = 'secret-key-a-0123456789abcdef0123456789';
  const KEY_B = 'secret-key-b-0123456789abcdef0123456789';
  for (const engine of await engines()) {
    it(`refuses with one line naming TESSERA_SECRET_KEY, exit code 2; an old database gets its verifier (${engine.name})`, {
      skip: engine.skip,
    }, async () => {
      const root = mkdtempSync(join(tmpdir(), 'tessera-secret-'));
      const pgDb = engine.name === 'postgres' ? await createPgDatabase() : undefined;
      const env = (dataDir: string, key: string, extra: Record<string, string> = {}) =>
        baseEnv(dataDir, {
          TESSERA_SECRET_KEY: key,
          PORT: '0',
          ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
          ...extra,
        });
      // Run one command, return its exit code and stderr.
      const run = (args: string[], e: Record<string, string | undefined>) => {
        const r = spawnSync(process.execPath, ['src/main.ts', ...args], { env: e, encoding: 'utf8', timeout: 60_000 });
        return { code: r.status, stderr: r.stderr };
      };
      const verifier = async (remove: boolean): Promise<string | undefined> => {
        if (pgDb) {
          const client = new pg.Client({ connectionString: pgDb.url });
          await client.connect();
          try {
            if (remove) await client.query("delete from server_state where key = 'auth.secret_verifier'");
            return (await client.query("select value from server_state where key = 'auth.secret_verifier'")).rows[0]
              ?.value;
          } finally {
            await client.end();
          }
        }
        const db = new Sqlite(join(root, 'one', 'tessera.sqlite'));
        try {
          if (remove) db.prepare("delete from server_state where key = 'auth.secret_verifier'").run();
          return (
            db.prepare("select value from server_state where key = 'auth.secret_verifier'").get() as
              | { value: string }
              | undefined
          )?.value;
        } finally {
          db.close();
        }
      };
      try {
        const first = run(['migrate'], env(join(root, 'one'), KEY_A));
        assert.equal(first.code, 0, first.stderr);
        const stored = await verifier(false);
        assert.match(stored ?? '', /^v1:/, 'the verifier is recorded');
        assert.ok(!stored!.includes(KEY_A), 'never the key itself');

        // Another key on the same database (for SQLite, the same data directory): refused before serving.
        const wrong = await failingStart(
          env(join(root, engine.name === 'postgres' ? 'two' : 'one'), KEY_B, { PORT: String(await freePort()) }),
        );
        assert.equal(wrong.code, 2, wrong.stderr);
        assertOneLine(wrong.stderr, /differs from the secret the database was initialised with/, 'TESSERA_SECRET_KEY');
        assert.doesNotMatch(wrong.stderr, /secret-key-[ab]/, 'no key is shown');

        // Without TESSERA_SECRET_KEY, a new data directory's generated secret.key is another secret too.
        if (pgDb) {
          const generated = await failingStart(env(join(root, 'three'), '', { PORT: String(await freePort()) }));
          assert.equal(generated.code, 2, generated.stderr);
          assertOneLine(generated.stderr, /secret\.key/, 'TESSERA_SECRET_KEY');
        }

        // A database from before the check (no verifier) takes the key of its next start, then holds to it.
        assert.equal(await verifier(true), undefined);
        const upgrade = run(['migrate'], env(join(root, 'one'), KEY_B));
        assert.equal(upgrade.code, 0, upgrade.stderr);
        assert.match((await verifier(false)) ?? '', /^v1:/);
        assert.notEqual(await verifier(false), stored);
        const old = run(['migrate'], env(join(root, 'one'), KEY_A));
        assert.equal(old.code, 2, old.stderr);
        assertOneLine(old.stderr, /differs/, 'TESSERA_SECRET_KEY');
      } finally {
        await pgDb?.drop();
        rmSync(root, { recursive: true, force: true });
      }
    });
  }
});

describe('temporary files left by a crashed process', () => {
  it("are removed at start: a gone process's folder at once, an unknown or foreign one when a day old; a live process's are kept", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tessera-leftovers-'));
    const tmp = join(dataDir, 'tmp');
    const host = hostname().replace(/[^A-Za-z0-9-]/g, '_') || 'host';
    // A process that has exited: its pid is gone.
    const gonePid = spawnSync(process.execPath, ['-e', '']).pid!;
    const leftovers = {
      crashed: `${host}.${gonePid}.0badf00d`,
      live: `${host}.${process.pid}.0a11ce00`,
      otherHostFresh: 'elsewhere.123.00c0ffee',
      otherHostOld: 'elsewhere.456.0dead000',
      strayOld: 'partial.zip',
    };
    for (const name of Object.values(leftovers)) {
      if (name.endsWith('.zip')) {
        mkdirSync(tmp, { recursive: true });
        writeFileSync(join(tmp, name), 'PK half a zip');
      } else {
        mkdirSync(join(tmp, name, 'form-x'), { recursive: true });
        writeFileSync(join(tmp, name, 'form-x', 'file'), 'half an upload');
      }
    }
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    utimesSync(join(tmp, leftovers.otherHostOld), twoDaysAgo, twoDaysAgo);
    utimesSync(join(tmp, leftovers.strayOld), twoDaysAgo, twoDaysAgo);
    const port = await freePort();
    const server = await startServer(
      baseEnv(dataDir, { PORT: String(port), TESSERA_ADMIN_PASSWORD: 'leftovers-admin-pw' }),
      port,
    );
    try {
      const left = readdirSync(tmp).sort();
      assert.deepEqual(left, [leftovers.live, leftovers.otherHostFresh].sort(), server.stdout());
      assert.ok(existsSync(join(tmp, leftovers.live, 'form-x', 'file')), 'a live process keeps its files');
      assert.match(server.stdout(), /removed temporary files left by stopped processes/);
    } finally {
      await stop(server.child);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
