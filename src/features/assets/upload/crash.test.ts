import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { forEachEngine } from '../../../../test/helpers/context.ts';
import { freePort } from '../../../../test/helpers/net.ts';
import { tesseraEnv } from '../../../../test/helpers/tessera-process.ts';
import { defaultTemplateId } from '../../metadata/index.ts';

const ADMIN = { username: 'upload-crash-admin', password: 'Upload-Crash-Password-1' };
const MAIN = fileURLToPath(new URL('../../../main.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The real server (`node src/main.ts serve`) is SIGKILLed in the middle of a streamed upload: the
// asset exists with its content pending (reference §7.2), no content may be stored, and the upload URL must still work afterwards.
forEachEngine('a killed server mid-upload', (ctx) => {
  it('leaves the asset with its content pending and no stored content; the upload can be sent again after restart', {
    timeout: 150_000,
  }, async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = tesseraEnv(ctx(), {
      PORT: String(port),
      TESSERA_PUBLIC_URL: base,
      TESSERA_LOG_LEVEL: 'error',
      TESSERA_ADMIN_USERNAME: ADMIN.username,
      TESSERA_ADMIN_PASSWORD: ADMIN.password,
    });
    let child: ChildProcess | undefined;
    const start = async () => {
      child = spawn(process.execPath, [MAIN, 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
      for (let i = 0; i < 2400; i++) {
        try {
          if ((await fetch(`${base}/healthz`)).ok) return;
        } catch {
          /* not up yet */
        }
        await sleep(25);
      }
      throw new Error('server did not start');
    };
    try {
      await start();
      const login = await fetch(`${base}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(ADMIN),
      });
      const token = ((await login.json()) as { session: { accessToken: string } }).session.accessToken;
      const headers = { 'content-type': 'application/json', accesstoken: token };
      const admin = await ctx()
        .deps.db.selectFrom('users')
        .select('org_id')
        .where('username', '=', ADMIN.username)
        .executeTakeFirstOrThrow();
      const security = await ctx()
        .deps.db.selectFrom('security_templates')
        .select('id')
        .where('org_id', '=', admin.org_id)
        .where('name', '=', 'Default')
        .executeTakeFirstOrThrow();
      const size = 8 * 1024 * 1024;
      const res = await fetch(`${base}/v1/asset`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          metadataTemplateId: await defaultTemplateId(ctx().deps.db, admin.org_id),
          metadata: [],
          securityTemplateIds: [security.id],
          filename: 'crash.bin',
        }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      const created = (await res.json()) as { objectId: string; url: string };
      // Stream half the file, then kill the server while the request is open.
      const upload = request(created.url, { method: 'PUT', headers: { 'content-length': String(size) } });
      upload.on('error', () => {});
      upload.write(Buffer.alloc(size / 2, 1));
      await sleep(300);
      const exited = new Promise((r) => child!.once('exit', r));
      child!.kill('SIGKILL');
      await exited;
      upload.destroy();
      await start();
      // The asset exists (reference §7.2), its content pending: no half-written content shows.
      const during = await fetch(`${base}/v1/asset/${created.objectId}`, { headers });
      assert.equal(during.status, 200);
      assert.equal(((await during.json()) as { contentState: string }).contentState, 'pending');
      const row = await ctx()
        .deps.db.selectFrom('assets')
        .select(['content_state', 'blob_key'])
        .where('id', '=', created.objectId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { content_state: 'pending', blob_key: null });
      const contentDir = join(ctx().dataDir, 'blobs', 'content');
      assert.ok(!existsSync(contentDir) || readdirSync(contentDir).length === 0, 'no content was stored');
      // The same URL takes the whole file now.
      const again = await fetch(created.url, { method: 'PUT', body: Buffer.alloc(size, 1) });
      assert.equal(again.status, 200, await again.clone().text());
      const after = await fetch(`${base}/v1/asset/${created.objectId}`, { headers });
      assert.equal(((await after.json()) as { contentState: string }).contentState, 'available');
    } finally {
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child!.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }
    }
  });
});
