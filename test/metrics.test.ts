// Issue 28, item 6: GET /metrics in Prometheus text format (prom-client), scraped as Prometheus
// would, with every named series present: requests by route and status with latency histograms, the
// job queue by kind (depth and age), webhook deliveries by outcome, database pool use, the edge's hits,
// misses and bytes (on its control port). Off (404) without TESSERA_METRICS_TOKEN; 401 without it.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { makeZone, startEdge, TestOrigin } from './helpers/cdn.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { enqueueRawJob } from '../src/core/jobs/queue.ts';
import { publishEvent } from '../src/core/events/index.ts';
import { newId } from '../src/core/ids.ts';
import { runDeliveryOnce } from '../src/features/webhooks/index.ts';

const TOKEN = 'metrics-token-0123456789abcdef';

/** Parses the exposition format into `name{labels} value` → value (what a scraper reads). */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    assert.ok(match, `not a Prometheus sample line: ${line}`);
    out.set(`${match[1]}${match[2] ?? ''}`, Number(match[3]));
  }
  return out;
}

/** The value of the one sample of `name` whose labels include all of `labels`. */
function sample(samples: Map<string, number>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const [key, value] of samples) {
    if (!key.startsWith(`${name}{`) && key !== name) continue;
    if (Object.entries(labels).every(([k, v]) => key.includes(`${k}="${v}"`))) return value;
  }
  return undefined;
}

forEachEngine('GET /metrics is off without TESSERA_METRICS_TOKEN', (ctx) => {
  it('answers 404 with the setting named, and counts nothing', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 404);
    assert.match(json(res).message, /TESSERA_METRICS_TOKEN/);
    assert.equal(ctx().deps.metrics, undefined);
  });
});

forEachEngine(
  'GET /metrics (Prometheus)',
  (ctx) => {
    let org: TestOrg;
    let receiver: Receiver;
    const origin = new TestOrigin();
    let edge: Awaited<ReturnType<typeof startEdge>>;
    before(async () => {
      org = await createTestOrg(ctx());
      receiver = await startReceiver();
      await origin.start();
      edge = await startEdge(ctx());
    });
    after(async () => {
      await edge.close();
      await origin.close();
      await receiver.close();
    });

    const scrape = async () => {
      const res = await ctx().inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      return parse(res.body);
    };

    it('refuses a scrape without the token, or with another, with 401 and WWW-Authenticate', async () => {
      for (const authorization of [undefined, 'Bearer wrong-token-0123456789', TOKEN, `Basic ${TOKEN}`]) {
        const res = await ctx().inject({
          method: 'GET',
          url: '/metrics',
          headers: authorization === undefined ? {} : { authorization },
        });
        assert.equal(res.statusCode, 401, String(authorization));
        assert.match(String(res.headers['www-authenticate']), /^Bearer/);
      }
      // A user's own credentials do not open it either: the numbers span every organization.
      const asAdmin = await ctx().inject({ method: 'GET', url: '/metrics', headers: org.admin.headers });
      assert.equal(asAdmin.statusCode, 401);
    });

    it('counts requests by route pattern and status, with a latency histogram', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await ctx().inject({ method: 'GET', url: '/v1/user', headers: org.admin.headers });
        assert.equal(res.statusCode, 200);
      }
      const missing = await ctx().inject({
        method: 'GET',
        url: `/v1/asset/${newId(Date.now())}`,
        headers: org.admin.headers,
      });
      assert.equal(missing.statusCode, 404);
      const samples = await scrape();
      const labels = { method: 'GET', route: '/v1/user', status: '200' };
      assert.ok((sample(samples, 'tessera_http_requests_total', labels) ?? 0) >= 3);
      assert.ok((sample(samples, 'tessera_http_request_duration_seconds_count', labels) ?? 0) >= 3);
      assert.ok((sample(samples, 'tessera_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }) ?? 0) >= 3);
      // The pattern, never the raw path (an id per asset would make the series unbounded).
      assert.equal(sample(samples, 'tessera_http_requests_total', { route: '/v1/asset/:id', status: '404' }), 1);
      for (const key of samples.keys()) assert.ok(!/route="\/v1\/asset\/[0-9A-Za-z]{10,}/.test(key), key);
      // Node's process metrics, prefixed.
      assert.ok(sample(samples, 'tessera_process_resident_memory_bytes') !== undefined);
      assert.ok(sample(samples, 'tessera_nodejs_eventloop_lag_seconds') !== undefined);
    });

    it('shows the job queue by kind: depth by state and the age of the oldest due job', async () => {
      const now = ctx().clock.now();
      await enqueueRawJob(ctx().deps.db, now - 30_000, { type: 'metrics.test', payload: null, runAt: now - 30_000 });
      await enqueueRawJob(ctx().deps.db, now, { type: 'metrics.test', payload: null });
      await enqueueRawJob(ctx().deps.db, now, { type: 'metrics.later', payload: null, runAt: now + 3_600_000 });
      const samples = await scrape();
      assert.equal(sample(samples, 'tessera_jobs', { kind: 'metrics.test', state: 'pending' }), 2);
      assert.equal(sample(samples, 'tessera_jobs', { kind: 'metrics.later', state: 'pending' }), 1);
      const age = sample(samples, 'tessera_job_oldest_age_seconds', { kind: 'metrics.test' }) ?? 0;
      assert.ok(age >= 30 && age < 3600, `oldest age ${age}`);
      // Not due yet: waiting, but not late.
      assert.equal(sample(samples, 'tessera_job_oldest_age_seconds', { kind: 'metrics.later' }), 0);
      await ctx().deps.db.deleteFrom('jobs').where('type', 'in', ['metrics.test', 'metrics.later']).execute();
      const emptied = await scrape();
      assert.equal(sample(emptied, 'tessera_jobs', { kind: 'metrics.test' }), undefined, 'a drained kind is gone');
    });

    it('counts webhook deliveries by outcome', async () => {
      let fail = false;
      receiver.respond((_req, res) => {
        res.statusCode = fail ? 500 : 200;
        res.end(fail ? 'no' : 'ok');
      });
      const created = await ctx().inject({
        method: 'POST',
        url: '/webhooks/endpoint',
        headers: org.admin.headers,
        payload: [{ description: 'metrics', url: receiver.url, eventTypes: ['*'] }],
      });
      assert.equal(created.statusCode, 200, created.body);
      const publish = () =>
        ctx()
          .deps.db.transaction()
          .execute((trx) =>
            publishEvent(trx, ctx().clock.now(), {
              orgId: org.orgId,
              type: 'asset.created',
              actor: org.admin.userId,
              data: {
                asset: { id: newId(Date.now()), filename: 'a.jpg', metadataTemplate: null, securityTemplates: [] },
              },
            }),
          );
      await publish();
      await publish();
      await runDeliveryOnce(ctx().deps);
      fail = true;
      await publish();
      await runDeliveryOnce(ctx().deps);
      const samples = await scrape();
      assert.equal(sample(samples, 'tessera_webhook_deliveries_total', { outcome: 'succeeded' }), 2);
      assert.equal(sample(samples, 'tessera_webhook_deliveries_total', { outcome: 'retrying' }), 1);
      assert.equal(sample(samples, 'tessera_webhook_deliveries_total', { outcome: 'exhausted' }), 0);
    });

    it('shows the database pool', async () => {
      const samples = await scrape();
      const total = sample(samples, 'tessera_db_pool_connections', { state: 'total' });
      assert.ok(total !== undefined && total >= 1, `pool total ${total}`);
      assert.ok(sample(samples, 'tessera_db_pool_connections', { state: 'idle' }) !== undefined);
      assert.ok(sample(samples, 'tessera_db_pool_connections', { state: 'waiting' }) !== undefined);
    });

    it("the edge's control port serves its hits, misses and bytes", async () => {
      const zone = await makeZone(ctx(), org, origin);
      origin.set('/m.txt', 'x'.repeat(1000), { 'cache-control': 'max-age=60' });
      for (let i = 0; i < 3; i++)
        assert.equal((await (await fetch(`${edge.url}/${zone.name}/m.txt`)).text()).length, 1000);
      const url = `${edge.edge.controlUrl}/metrics`;
      assert.equal((await fetch(url)).status, 401);
      const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 200);
      const samples = parse(await res.text());
      assert.equal(sample(samples, 'tessera_edge_requests_total', { cache: 'miss' }), 1);
      assert.equal(sample(samples, 'tessera_edge_requests_total', { cache: 'hit' }), 2);
      assert.equal(sample(samples, 'tessera_edge_bytes_served_total'), 3000);
      assert.equal(sample(samples, 'tessera_edge_hit_bytes_total'), 2000);
      assert.equal(sample(samples, 'tessera_edge_origin_fetches_total'), 1);
      assert.ok((sample(samples, 'tessera_edge_cache_objects') ?? 0) >= 1);
      assert.ok((sample(samples, 'tessera_edge_cache_bytes', { tier: 'memory' }) ?? 0) >= 1000);
    });
  },
  { env: { TESSERA_METRICS_TOKEN: TOKEN } },
);
