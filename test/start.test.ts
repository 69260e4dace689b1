// `npm start` end to end: a real process on an empty data directory serves the API, creates the
// first administrator once (printing a generated password), and does not re-create it on restart.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from './helpers/net.ts';

async function start(
  dataDir: string,
  port: number,
  extraEnv: Record<string, string> = {},
): Promise<{ child: ChildProcess; output: () => string }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TESSERA_DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    TESSERA_LOG_LEVEL: 'info',
    ...extraEnv,
  };
  delete env.DATABASE_URL;
  delete env.TESSERA_ADMIN_PASSWORD;
  delete env.TESSERA_ADMIN_USERNAME;
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, output: () => out };
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

describe('npm start on an empty data directory', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-start-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('serves /healthz, /readyz, /docs and /openapi.json; bootstraps once; stops cleanly', async () => {
    const port = await freePort();
    const first = await start(dataDir, port);
    try {
      for (const path of ['/healthz', '/readyz', '/docs/', '/openapi.json']) {
        const res = await fetch(`http://127.0.0.1:${port}${path}`);
        assert.equal(res.status, 200, path);
      }
      assert.equal((await fetch(`http://127.0.0.1:${port}/v1/user`)).status, 401);
      const matches = first.output().match(/generated password (\S+)/g) ?? [];
      assert.equal(matches.length, 1, first.output());
    } finally {
      assert.equal(await stop(first.child), 0);
    }
    const second = await start(dataDir, port);
    try {
      assert.doesNotMatch(second.output(), /generated password|First start/);
    } finally {
      await stop(second.child);
    }
  });

  it('refuses to start with a bad setting, naming the variable', async () => {
    const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
      env: { ...process.env, PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 2);
    assert.match(err, /PORT/);
  });
});
