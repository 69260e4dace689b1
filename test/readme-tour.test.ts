// The README's API tour, run as written (bash, curl, jq) against a fresh install started as the README says.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from './helpers/net.ts';

function tourScript(): string {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## A short API tour'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'the tour has a sh block');
  return block[1]!;
}

const hasTools = ['curl', 'jq', 'bash'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0);

describe('README tour on a fresh install', { skip: hasTools ? false : 'needs curl, jq and bash' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-tour-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs as written, every step answering as the comments say', async () => {
    const port = await freePort();
    const env: Record<string, string | undefined> = {
      ...process.env,
      PORT: String(port),
      TESSERA_ALLOW_PRIVATE_TARGETS: 'true',
      TESSERA_LOG_LEVEL: 'warn',
    };
    for (const name of [
      'DATABASE_URL',
      'TESSERA_ADMIN_PASSWORD',
      'TESSERA_ADMIN_USERNAME',
      'TESSERA_DATA_DIR',
      'TESSERA_SECRET_KEY',
      'HOST',
    ])
      delete env[name];
    // `npm start` = `node src/main.ts serve`, from the install directory (here: a fresh one, so ./data is new).
    const server = spawn(process.execPath, [resolve('src/main.ts'), 'serve'], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let serverOut = '';
    server.stdout!.on('data', (d) => (serverOut += d));
    server.stderr!.on('data', (d) => (serverOut += d));
    try {
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
        } catch {
          // starting
        }
        if (Date.now() > deadline || server.exitCode !== null) throw new Error(`server did not start:\n${serverOut}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const tour = spawnSync('bash', ['-c', `set -eu\n${tourScript()}`], {
        cwd: dir,
        env: { ...process.env, BASE: `http://127.0.0.1:${port}`, TESSERA_ADMIN_PASSWORD: '' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      const out = tour.stdout;
      assert.equal(tour.status, 0, `${out}\n${tour.stderr}`);
      assert.doesNotMatch(out, /"status": "error"|null/, out);
      assert.match(out, /"userName": "admin"/);
      assert.match(out, /"userName": "ada"/);
      assert.match(out, /^1$/m, 'people search finds Ada');
      assert.match(out, /"accountType": "service"/, 'the API key works');
      assert.match(out, /^[0-9a-f]{8}-[0-9a-f-]{27}$/m, 'the webhook endpoint was created');
      assert.match(out, /^Default$/m, 'the default security template is listed');
      assert.match(out, /^api_key\.created$/m, 'the event types are listed');
      assert.match(out, /^3$/m, 'bulk creation made three assets');
      assert.match(out, /^poster\.jpg$/m, 'the asset exists at once, at GET /v1/assets/{id}');
      assert.match(out, /^pending$/m, 'its content is pending');
      assert.match(out, /^200 image\/webp$/m, 'the transformed file is served');
      assert.match(out.trim(), /401$/, 'signed out');
    } finally {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
  });
});
