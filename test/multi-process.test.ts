// Issue 28, item 5: the scaled-out set in one test, on PostgreSQL and a real S3-protocol server —
// two API processes (`serve --no-workers`), one `worker`, one `edge`, each its own process on its own
// port. Sign in on one and use the token on the other; revoke, disable and change a group's template
// on one and see the other refuse or hide within 1 s; upload through one, renditions by the worker,
// download and search through the other, delivery through the edge; then kill one API process and
// the worker mid-traffic (a bulk edit running, creates in flight on both) and see every acknowledged
// write present and the bulk edit applied to each asset exactly once after a new worker takes over.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestContext, ENGINES, type TestContext } from './helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from './helpers/factories.ts';
import { holder } from './helpers/permissions.ts';
import { PERMISSIONS } from '../src/core/authz/catalog.ts';
import { defaultTemplate, jpeg } from './helpers/assets.ts';
import { freePort } from './helpers/net.ts';
import { startS3 } from './helpers/s3.ts';
import { spawnTessera, tesseraEnv, type TesseraProcess } from './helpers/tessera-process.ts';
import { waitForValue } from './helpers/wait.ts';
import { fromJson } from '../src/core/db/json.ts';

const postgres = ENGINES.find((e) => e.name === 'postgres');
const DEADLINE_MS = 1000;

describe('scaled out: two API processes, a worker and an edge on PostgreSQL and S3', {
  skip: postgres ? postgres.skip : 'PostgreSQL only',
}, () => {
  let ctx: TestContext;
  let s3: Awaited<ReturnType<typeof startS3>>;
  let env: (extra?: Record<string, string>) => Record<string, string>;
  const processes: TesseraProcess[] = [];
  let a: { url: string; p: TesseraProcess };
  let b: { url: string; p: TesseraProcess };
  let worker: TesseraProcess;
  let edgeUrl: string;
  let org: TestOrg;
  let token: string;

  const api = async (base: string, method: string, path: string, auth: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, text };
  };

  async function startApi(): Promise<{ url: string; p: TesseraProcess }> {
    const port = await freePort();
    const p = spawnTessera(['serve', '--no-workers'], env({ PORT: String(port), TESSERA_LOG_LEVEL: 'info' }));
    processes.push(p);
    await p.waitFor(/Server listening/);
    return { url: `http://127.0.0.1:${port}`, p };
  }

  function startWorker(): TesseraProcess {
    const p = spawnTessera(
      ['worker', '--concurrency', '4'],
      env({ TESSERA_JOB_LEASE_MS: '3000', TESSERA_LOG_LEVEL: 'info' }),
    );
    processes.push(p);
    return p;
  }

  before(async () => {
    s3 = await startS3();
    ctx = await createTestContext('postgres', {
      realClock: true,
      env: {
        TESSERA_STORAGE: `s3://${s3.bucket}?endpoint=${s3.endpoint}&region=us-east-1`,
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
      },
    });
    env = (extra = {}) =>
      tesseraEnv(ctx, {
        TESSERA_STORAGE: `s3://${s3.bucket}?endpoint=${s3.endpoint}&region=us-east-1`,
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
        TESSERA_LOG_LEVEL: 'warn',
        ...extra,
      });
    org = await createTestOrg(ctx);
    const edgePort = await freePort();
    const edge = spawnTessera(
      ['edge'],
      env({ EDGE_PORT: String(edgePort), EDGE_HOST: '127.0.0.1', EDGE_HEARTBEAT_MS: '500', TESSERA_LOG_LEVEL: 'info' }),
    );
    processes.push(edge);
    [a, b] = await Promise.all([startApi(), startApi()]);
    worker = startWorker();
    await worker.waitFor(/worker started/);
    await edge.waitFor(/edge listening/);
    edgeUrl = `http://127.0.0.1:${edgePort}`;
  });

  after(async () => {
    await Promise.all(processes.map((p) => p.stop(15_000)));
    await ctx?.close();
    await s3?.close();
  });

  it('a token from a sign-in on one API process works on the other', async () => {
    const signIn = await api(
      a.url,
      'POST',
      '/v1/auth/token',
      {},
      { username: org.admin.username, password: org.admin.password },
    );
    assert.equal(signIn.status, 200, signIn.text);
    token = signIn.body.session.accessToken;
    const me = await api(b.url, 'GET', '/v1/user', { accesstoken: token });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.id ?? me.body.userId, org.admin.userId);
  });

  /** Served by B before the change on A, then refused or hidden by B within 1 s of it. */
  async function honouredOnB(
    path: string,
    auth: Record<string, string>,
    change: () => Promise<void>,
    expected: (r: { status: number; text: string }) => boolean,
  ) {
    const before = await api(b.url, 'GET', path, auth);
    assert.equal(before.status, 200, before.text);
    await change();
    const started = performance.now();
    for (;;) {
      const now = await api(b.url, 'GET', path, auth);
      const elapsed = performance.now() - started;
      if (expected(now)) return elapsed;
      assert.ok(
        elapsed <= DEADLINE_MS,
        `${path} on B still ${now.status} ${Math.round(elapsed)} ms after the change on A`,
      );
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('an API key revoked on one process is refused by the other within 1 s; so is a disabled user', async () => {
    const admin = { accesstoken: token };
    const me = await api(a.url, 'GET', '/v1/user', admin);
    const created = await api(a.url, 'POST', '/api/v1/api-key/create-api-key', admin, {
      name: 'mp',
      roleId: me.body.roleId ?? me.body.userRoleId,
    });
    assert.equal(created.status, 200, created.text);
    const key = { 'x-api-key': created.body.key };
    await honouredOnB(
      '/v1/user',
      key,
      async () => {
        const revoked = await api(a.url, 'POST', '/api/v1/api-key/revoke-api-key', admin, { id: created.body.id });
        assert.equal(revoked.status, 200, revoked.text);
      },
      (r) => r.status === 401,
    );

    const user = await createTestUser(ctx, org);
    const signIn = await api(a.url, 'POST', '/v1/auth/token', {}, { username: user.username, password: user.password });
    const theirs = { accesstoken: signIn.body.session.accessToken };
    await honouredOnB(
      '/v1/user',
      theirs,
      async () => {
        const disabled = await api(a.url, 'PATCH', `/v1/user/${user.userId}`, admin, { status: 'disabled' });
        assert.equal(disabled.status, 200, disabled.text);
      },
      (r) => r.status === 401,
    );
  });

  it("a group's grant changed on one process hides its assets on the other within 1 s", async () => {
    const admin = { accesstoken: token };
    const template = await defaultTemplate(ctx, org);
    // A user in a group of their own, which sees the asset through one security template only.
    const member = await holder(ctx, org, [], ['view']);
    const asset = await api(a.url, 'POST', '/v1/asset', admin, {
      filename: 'hidden-later.jpg',
      metadataTemplateId: template.id,
      metadata: [],
      securityTemplateIds: [member.templateId],
    });
    assert.equal(asset.status, 200, asset.text);
    const signIn = await api(
      a.url,
      'POST',
      '/v1/auth/token',
      {},
      { username: member.user.username, password: member.user.password },
    );
    assert.equal(signIn.status, 200, signIn.text);
    const theirs = { accesstoken: signIn.body.session.accessToken };
    await honouredOnB(
      `/v1/asset/${asset.body.objectId}`,
      theirs,
      async () => {
        // The template now grants the member's group nothing (administrators keep everything).
        const changed = await api(a.url, 'PATCH', `/v1/security/template/${member.templateId}`, admin, {
          securityDenormalized: [
            { groupId: org.groups.administrators, permissions: Object.values(PERMISSIONS).map((p) => p.id) },
          ],
        });
        assert.equal(changed.status, 200, changed.text);
      },
      (r) => r.status === 404,
    );
  });

  it('upload through one process, renditions by the worker, download and search through the other, delivery through the edge', async () => {
    const admin = { accesstoken: token };
    const template = await defaultTemplate(ctx, org);
    const bytes = await jpeg(800, 600);
    const word = `mpword${Date.now().toString(36)}`;
    const created = await api(a.url, 'POST', '/v1/asset', admin, {
      filename: `${word}.jpg`,
      metadataTemplateId: template.id,
      metadata: [],
      securityTemplateIds: [org.defaultTemplateId],
    });
    assert.equal(created.status, 200, created.text);
    assert.ok(created.body.url.startsWith(s3.endpoint), 'a presigned S3 URL');
    assert.equal((await fetch(created.body.url, { method: 'PUT', body: bytes })).status, 200);
    const done = await api(a.url, 'POST', '/v1/asset/complete', admin, {
      action: 'complete',
      fileId: created.body.fileId,
    });
    assert.equal(done.status, 200, done.text);
    const id = created.body.objectId as string;

    const ready = await waitForValue('renditions by the worker, seen through B', async () => {
      const r = await api(b.url, 'GET', `/v1/asset/${id}`, admin);
      return r.status === 200 && r.body.renditionsState === 'ready' ? r.body : undefined;
    });
    const thumbUrl = new URL(ready.renditions.imageThumb);
    const thumb = await fetch(`${b.url}${thumbUrl.pathname}${thumbUrl.search}`, { headers: admin });
    assert.equal(thumb.status, 200);
    const link = await api(b.url, 'GET', `/v1/asset/${id}/content`, admin);
    assert.equal(link.status, 200, link.text);
    // Links name TESSERA_PUBLIC_URL (the load balancer in front of both); here B stands behind it.
    const viaB = (url: string) => url.replace(ctx.config.publicUrl, b.url);
    const download = await fetch(viaB(link.body.presignedURL));
    assert.ok(Buffer.from(await download.arrayBuffer()).equals(bytes), 'downloaded byte for byte');

    const found = await waitForValue(
      "the upload in B's search",
      async () => {
        const r = await api(b.url, 'POST', '/v1/search/keyword', admin, { searchTerm: [word] });
        return r.status === 200 && r.text.includes(id) ? r : undefined;
      },
      10_000,
    );
    assert.ok(found);

    const zoneName = `mp-${Date.now().toString(36)}`;
    const zone = await api(a.url, 'POST', '/v1/cdn/configure', admin, {
      name: zoneName,
      region: 'de',
      url: `https://${zoneName}.cdn.example.com`,
    });
    assert.ok(zone.status === 200 || zone.status === 201, zone.text);
    const published = await api(b.url, 'POST', '/v1/cdn/publish', admin, { assets: [id], pullZoneId: zone.body.id });
    assert.equal(published.status, 200, published.text);
    const served = await waitForValue(
      'the edge to serve the published asset',
      async () => {
        const res = await fetch(`${edgeUrl}/${zoneName}/${id}/${word}.jpg`);
        return res.status === 200 ? Buffer.from(await res.arrayBuffer()) : undefined;
      },
      15_000,
    );
    assert.ok(served.equals(bytes), 'the edge serves the original byte for byte');
  });

  it('kills an API process and the worker mid-traffic: every acknowledged write is there, the bulk edit lands exactly once', {
    timeout: 300_000,
  }, async () => {
    const admin = { accesstoken: token };
    const template = await defaultTemplate(ctx, org);
    const body = (name: string) => ({
      filename: name,
      metadataTemplateId: template.id,
      metadata: [],
      securityTemplateIds: [org.defaultTemplateId],
    });
    const ids: string[] = [];
    for (let i = 0; i < 400; i++) {
      const r = await api(i % 2 ? a.url : b.url, 'POST', '/v1/asset', admin, body(`bulk-${i}.jpg`));
      assert.equal(r.status, 200, r.text);
      ids.push(r.body.objectId);
    }
    const eventsBefore = await ctx.deps.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'asset.metadata.updated')
      .executeTakeFirstOrThrow();
    const started = await api(b.url, 'PATCH', '/v1/asset', admin, {
      metadataTemplateId: template.id,
      objectIds: ids,
      metadataDocument: [
        { metadataDefinitionId: template.attr('title'), metadataDefinitionValue: 'x', operation: 'append' },
      ],
    });
    assert.equal(started.status, 200, started.text);
    const actionId = started.body.jobId as string;

    // Writes in flight on both processes; only the acknowledged ones are promised.
    const acknowledged: string[] = [];
    let stop = false;
    const traffic = (base: string) =>
      (async () => {
        let i = 0;
        while (!stop) {
          const r = await api(base, 'POST', '/v1/asset', admin, body(`live-${base.slice(-5)}-${i++}.jpg`)).catch(
            () => undefined,
          );
          if (r?.status === 200) acknowledged.push(r.body.objectId);
          if (!r) await new Promise((res) => setTimeout(res, 20));
        }
      })();
    const running = [traffic(a.url), traffic(b.url), traffic(a.url), traffic(b.url)];
    // The worker has begun the bulk edit (some items applied), then both are killed.
    await waitForValue(
      'the bulk edit to be under way',
      async () => {
        const r = await api(b.url, 'GET', `/v1/action/${actionId}`, admin);
        return r.body.processed > 0 ? true : undefined;
      },
      60_000,
    );
    a.p.child.kill('SIGKILL');
    worker.child.kill('SIGKILL');
    await Promise.all([a.p.exited, worker.exited]);
    await new Promise((r) => setTimeout(r, 300));
    const replacement = startWorker();
    const action = await waitForValue(
      'the bulk edit to finish on the new worker',
      async () => {
        const r = await api(b.url, 'GET', `/v1/action/${actionId}`, admin);
        return r.body.status === 'succeeded' || r.body.status === 'failed' ? r.body : undefined;
      },
      180_000,
    );
    stop = true;
    await Promise.all(running);
    assert.equal(action.status, 'succeeded', JSON.stringify(action));
    assert.deepEqual(action.result, { updated: ids.length, failed: 0, total: ids.length });

    const rows = await ctx.deps.db.selectFrom('assets').select(['id', 'metadata']).where('id', 'in', ids).execute();
    const wrong = rows
      .map(
        (r) =>
          fromJson<{ metadataDefinitionId: string; metadataDefinitionValue?: unknown }[]>(r.metadata, []).find(
            (m) => m.metadataDefinitionId === template.attr('title'),
          )?.metadataDefinitionValue,
      )
      .filter((t) => t !== 'x');
    assert.equal(rows.length, ids.length);
    assert.deepEqual(wrong, [], 'every title is "x", appended once');
    const eventsAfter = await ctx.deps.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'asset.metadata.updated')
      .executeTakeFirstOrThrow();
    assert.equal(Number(eventsAfter.n) - Number(eventsBefore.n), ids.length, 'one event per asset');

    assert.ok(acknowledged.length > 0, 'writes were acknowledged during the kill');
    const present = await ctx.deps.db.selectFrom('assets').select('id').where('id', 'in', acknowledged).execute();
    assert.equal(present.length, new Set(acknowledged).size, 'every acknowledged create is in the database');
    await replacement.stop();
  });
});
