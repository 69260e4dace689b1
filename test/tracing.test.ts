// Issue 28, item 6 (optional OpenTelemetry traces): with OTEL_EXPORTER_OTLP_ENDPOINT set, each API
// request is a server span exported over OTLP/HTTP to the collector (here a real HTTP receiver on
// loopback, reading the JSON encoding as an OpenTelemetry Collector would), a caller's W3C
// traceparent is followed, and a job enqueued by the request runs as a span of the same trace.
// Without the setting, no tracer exists and nothing is sent.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, it } from 'node:test';
import { forEachEngine } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { createAsset, jpeg, pathOf } from './helpers/assets.ts';
import { waitForValue } from './helpers/wait.ts';
import { JobSignal } from '../src/core/jobs/queue.ts';
import { startWorker } from '../src/core/jobs/worker.ts';
import { parseConfig } from '../src/config.ts';
import { parseTraceparent } from '../src/core/tracing.ts';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
  resource: Record<string, string>;
}

/** An OTLP/HTTP traces receiver: keeps every span it is sent (JSON encoding), with its resource. */
async function startCollector() {
  const spans: ExportedSpan[] = [];
  const headers: IncomingMessage['headers'][] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      headers.push(req.headers);
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: {
            resource: { attributes: { key: string; value: { stringValue?: string } }[] };
            scopeSpans: { spans: Omit<ExportedSpan, 'resource'>[] }[];
          }[];
        };
        for (const rs of body.resourceSpans) {
          const resource = Object.fromEntries(rs.resource.attributes.map((a) => [a.key, a.value.stringValue ?? '']));
          for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, resource });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    headers,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const attribute = (span: ExportedSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

const collector = await startCollector();
after(() => collector.close());

forEachEngine(
  'OpenTelemetry traces',
  (ctx) => {
    it('exports a server span per request, named by its route, following the caller traceparent', async () => {
      const org = await createTestOrg(ctx());
      const traceId = randomBytes(16).toString('hex');
      const parentId = '00f067aa0ba902b7';
      const res = await ctx().inject({
        method: 'GET',
        url: '/v1/user',
        headers: { ...org.admin.headers, traceparent: `00-${traceId}-${parentId}-01` },
      });
      assert.equal(res.statusCode, 200, res.body);
      const requestId = String(res.headers['x-request-id']);
      const span = await waitForValue(
        'the request span at the collector',
        async () => collector.spans.find((s) => s.traceId === traceId && s.kind === 2),
        20_000,
      );
      assert.equal(span.parentSpanId, parentId);
      assert.equal(span.name, 'GET /v1/user');
      assert.equal(attribute(span, 'http.route'), '/v1/user');
      assert.equal(attribute(span, 'http.response.status_code'), 200);
      assert.equal(attribute(span, 'tessera.request_id'), requestId);
      assert.equal(span.resource['service.name'], 'tessera-under-test');
      assert.equal(span.resource['tessera.role'], 'serve');
      // OTEL_EXPORTER_OTLP_HEADERS reach the collector (an API key for a hosted collector, say).
      assert.ok(collector.headers.some((h) => h['x-collector-key'] === 'k1'));
    });

    it('starts a new trace for a malformed traceparent, and marks a 5xx answer as an error only then', async () => {
      const res = await ctx().inject({
        method: 'GET',
        url: '/no/such/route',
        headers: { traceparent: '00-zz-not-a-trace' },
      });
      assert.equal(res.statusCode, 404);
      const requestId = String(res.headers['x-request-id']);
      const span = await waitForValue(
        'the unmatched request span',
        async () => collector.spans.find((s) => attribute(s, 'tessera.request_id') === requestId),
        20_000,
      );
      assert.equal(span.parentSpanId ?? '', '');
      assert.equal(span.name, 'GET unmatched');
    });

    it("runs a job enqueued by a request as a span of the request's trace", async () => {
      const org = await createTestOrg(ctx());
      const created = await createAsset(ctx(), org, { filename: 'traced.jpg' });
      const traceId = randomBytes(16).toString('hex');
      const put = await ctx().inject({
        method: 'PUT',
        url: pathOf(created.url!),
        payload: await jpeg(32, 32),
        headers: { 'content-type': 'application/octet-stream', traceparent: `00-${traceId}-1111111111111111-01` },
      });
      assert.equal(put.statusCode, 200, put.body);
      const job = await ctx()
        .deps.db.selectFrom('jobs')
        .select(['id', 'trace_parent'])
        .where('org_id', '=', org.orgId)
        .where('type', '=', 'assets.renditions')
        .executeTakeFirstOrThrow();
      const stored = parseTraceparent(job.trace_parent);
      assert.equal(stored?.traceId, traceId, 'the job records the request span as its parent');

      const worker = startWorker({
        db: ctx().deps.db,
        engine: ctx().deps.engine,
        clock: ctx().deps.clock,
        log: ctx().deps.log,
        signal: new JobSignal(),
        handlers: { 'assets.renditions': async () => {} },
        pollMs: 3_600_000,
        tracing: ctx().deps.tracing,
      });
      try {
        await worker.drain();
      } finally {
        await worker.stop();
      }
      const requestSpan = await waitForValue(
        'the upload span',
        async () => collector.spans.find((s) => s.traceId === traceId && s.kind === 2),
        20_000,
      );
      const jobSpan = await waitForValue(
        'the job span',
        async () => collector.spans.find((s) => s.traceId === traceId && s.name === 'job assets.renditions'),
        20_000,
      );
      assert.equal(jobSpan.parentSpanId, requestSpan.spanId);
      assert.equal(jobSpan.kind, 5, 'a consumer span');
      assert.equal(attribute(jobSpan, 'tessera.job.id'), job.id);
      assert.equal(attribute(jobSpan, 'tessera.request_id'), String(put.headers['x-request-id']));
    });
  },
  {
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'tessera-under-test',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=k1',
    },
  },
);

forEachEngine('OpenTelemetry traces are off without an endpoint', (ctx) => {
  it('makes no tracer and records no traceparent on jobs', async () => {
    assert.equal(ctx().deps.tracing, undefined);
    const org = await createTestOrg(ctx());
    const created = await createAsset(ctx(), org, { filename: 'untraced.jpg' });
    const put = await ctx().inject({
      method: 'PUT',
      url: pathOf(created.url!),
      payload: await jpeg(16, 16),
      headers: { 'content-type': 'application/octet-stream', traceparent: `00-${'c'.repeat(32)}-${'d'.repeat(16)}-01` },
    });
    assert.equal(put.statusCode, 200, put.body);
    const job = await ctx()
      .deps.db.selectFrom('jobs')
      .select('trace_parent')
      .where('org_id', '=', org.orgId)
      .executeTakeFirstOrThrow();
    assert.equal(job.trace_parent, null);
  });
});

it('refuses a malformed OTLP endpoint, headers or sampler ratio, naming the setting', () => {
  const base = { TESSERA_DATA_DIR: '/tmp/tessera-tracing-config' };
  assert.throws(
    () => parseConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }),
    /OTEL_EXPORTER_OTLP_ENDPOINT/,
  );
  assert.throws(
    () => parseConfig({ ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://collector/v1/traces' }),
    /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT/,
  );
  assert.throws(
    () => parseConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }),
    /OTEL_EXPORTER_OTLP_HEADERS/,
  );
  assert.throws(
    () => parseConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER_ARG: '2' }),
    /OTEL_TRACES_SAMPLER_ARG/,
  );
  const config = parseConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' });
  assert.equal(config.tracing?.endpoint, 'http://collector:4318/v1/traces');
  assert.equal(
    parseConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).tracing,
    undefined,
  );
});

it('reads a W3C traceparent and refuses malformed or all-zero ones', () => {
  assert.deepEqual(parseTraceparent(`00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`), {
    traceId: 'a'.repeat(32),
    spanId: 'b'.repeat(16),
    sampled: true,
  });
  for (const bad of [
    undefined,
    '',
    '00-xyz',
    `00-${'0'.repeat(32)}-${'b'.repeat(16)}-01`,
    `00-${'a'.repeat(32)}-${'0'.repeat(16)}-00`,
  ])
    assert.equal(parseTraceparent(bad), undefined, String(bad));
});
