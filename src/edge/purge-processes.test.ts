import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, it } from 'node:test';
import { Agent, request } from 'undici';
import { forEachEngine, json } from '../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../test/helpers/factories.ts';
import { spawnEdge, TestOrigin } from '../../test/helpers/cdn.ts';

forEachEngine('CDN purge across edge processes', (ctx) => {
  const origin = new TestOrigin();
  const edges: { url: string; child: ChildProcess }[] = [];
  let org: TestOrg;
  const agent = new Agent({ connections: 16 });
  before(async () => {
    await origin.start();
    org = await createTestOrg(ctx());
    edges.push(await spawnEdge(ctx(), 'a'));
    edges.push(await spawnEdge(ctx(), 'b'));
  });
  after(async () => {
    for (const e of edges) {
      if (e.child.exitCode !== null || e.child.signalCode !== null) continue;
      const exited = new Promise((r) => e.child.once('exit', r));
      e.child.kill('SIGTERM');
      await exited;
    }
    await agent.close();
    await origin.close();
  });

  const read = async (edge: { url: string }, path: string) =>
    (await request(`${edge.url}${path}`, { dispatcher: agent })).body.text();

  it('two `tessera edge` processes register; a purge is applied on both before the API call returns', async () => {
    const list = json(await ctx().inject({ method: 'GET', url: '/v1/cdn/edges', headers: org.admin.headers }));
    assert.ok(list.length >= 2, JSON.stringify(list));
    const zone = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/cdn/pullzones',
        headers: org.admin.headers,
        payload: { name: `mp-${Math.random().toString(36).slice(2, 9)}`, originUrl: origin.url },
      }),
    );
    let version = 0;
    origin.routes.set('/obj', (_req, res) =>
      res
        .writeHead(200, { 'cache-control': 'max-age=3600, stale-while-revalidate=3600, stale-if-error=3600' })
        .end(`v${version}`),
    );
    // Zone creation is pushed to both edges before the API answered.
    for (const e of edges) assert.equal(await read(e, `/${zone.name}/obj`), 'v0');
    for (const e of edges) assert.equal(await read(e, `/${zone.name}/obj`), 'v0');
    assert.equal(origin.count('/obj'), 2);
    // Randomized purge/read races: readers hammer both edges while versions change; once a purge
    // call has returned, no edge may answer with an older version.
    let stop = false;
    let floor = 0;
    const violations: string[] = [];
    const readers = edges.flatMap((e) =>
      Array.from({ length: 3 }, async () => {
        while (!stop) {
          const min = floor;
          const body = await read(e, `/${zone.name}/obj`);
          if (Number(body.slice(1)) < min) violations.push(`${e.url} served ${body} after purge of v${min - 1}`);
        }
      }),
    );
    for (let i = 1; i <= 40; i++) {
      version = i;
      const res = await ctx().inject({
        method: 'POST',
        url: `/v1/cdn/pullzones/${zone.id}/purge`,
        headers: org.admin.headers,
        payload: i % 2 ? { url: `/${zone.name}/obj` } : { everything: true },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json(res).edges, 2);
      floor = i;
      for (const e of edges) assert.equal(await read(e, `/${zone.name}/obj`), `v${i}`);
    }
    stop = true;
    await Promise.all(readers);
    assert.deepEqual(violations, []);
  });
});

forEachEngine('CDN purge across the workers of one edge (EDGE_WORKERS=2)', (ctx) => {
  const origin = new TestOrigin();
  let edge: { url: string; child: ChildProcess };
  let org: TestOrg;
  const agent = new Agent({ connections: 16 });
  before(async () => {
    await origin.start();
    org = await createTestOrg(ctx());
    edge = await spawnEdge(ctx(), 'w', { EDGE_WORKERS: '2' }, 2);
  });
  after(async () => {
    if (edge.child.exitCode === null && edge.child.signalCode === null) {
      const exited = new Promise((r) => edge.child.once('exit', r));
      edge.child.kill('SIGTERM');
      await exited;
    }
    await agent.close();
    await origin.close();
  });

  it("each worker has its own control server; a purge empties both workers' memory caches before the API returns", async () => {
    // Control addresses are internal: the API does not show them (issue 23, defect 12); read them where the API does.
    const list = (await ctx().deps.db.selectFrom('cdn_edges').select('control_url').execute()).map((r) => ({
      controlUrl: r.control_url,
    }));
    assert.equal(new Set(list.map((e) => e.controlUrl)).size, list.length, JSON.stringify(list));
    assert.ok(list.length >= 2);
    const zone = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/cdn/pullzones',
        headers: org.admin.headers,
        payload: { name: `wk-${Math.random().toString(36).slice(2, 9)}`, originUrl: origin.url },
      }),
    );
    let version = 0;
    origin.routes.set('/w', (_req, res) =>
      res.writeHead(200, { 'cache-control': 'max-age=3600, stale-while-revalidate=3600' }).end(`v${version}`),
    );
    // 16 parallel connections, spread over both workers by the kernel (SO_REUSEPORT).
    const readAll = () =>
      Promise.all(
        Array.from({ length: 16 }, async () =>
          (await request(`${edge.url}/${zone.name}/w`, { dispatcher: agent })).body.text(),
        ),
      );
    for (let i = 0; i < 5; i++) await readAll();
    assert.equal(origin.count('/w'), 2, 'each worker fetched once and then served from its own cache');
    for (let i = 1; i <= 10; i++) {
      version = i;
      const res = await ctx().inject({
        method: 'POST',
        url: `/v1/cdn/pullzones/${zone.id}/purge`,
        headers: org.admin.headers,
        payload: { url: `/${zone.name}/w` },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(new Set(await readAll()), new Set([`v${i}`]));
    }
  });
});
