// Metadata-only asset creation: single requests to POST /v1/assets/asset and batches to
// POST /v1/assets/bulk (validation, permission and template checks, inserts, outbox events), against
// bare inserts of the same rows, one per transaction and multi-row, all in the same run.
import { cpus, loadavg } from 'node:os';
import { newId } from '../src/core/ids.ts';
import { insertRows } from '../src/core/db/insert-rows.ts';
import type { AssetRow } from '../src/features/assets/index.ts';
import { benchOrg } from './assets-fixture.ts';
import { fmt, printTable, startBenchServer } from './lib.ts';

const N = Number(process.env.ASSETS_BENCH_CREATE ?? 5000);
const BATCH = Number(process.env.ASSETS_BENCH_BATCH ?? 500);
const CONCURRENCY = 8;
const loadBefore = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
const server = await startBenchServer();
const { org, headers, templateId } = await benchOrg(server);
const body = {
  metadataTemplateId: templateId,
  securityTemplateIds: [org.defaultTemplateId],
  metadata: [
    { name: 'Title', value: 'Bulk' },
    { name: 'Creator', value: 'Bench' },
  ],
};
// Warm-up: both routes compiled and their caches filled before anything is timed.
for (let i = 0; i < 100; i++)
  await server.app.inject({ method: 'POST', url: '/v1/assets/asset', headers, payload: body });
for (let i = 0; i < 2; i++)
  await server.app.inject({
    method: 'POST',
    url: '/v1/assets/bulk',
    headers,
    payload: { assets: Array.from({ length: 100 }, () => body) },
  });

let next = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < N) {
      next++;
      const res = await server.app.inject({ method: 'POST', url: '/v1/assets/asset', headers, payload: body });
      if (res.statusCode !== 200) throw new Error(res.body);
    }
  }),
);
const ours = N / ((performance.now() - t0) / 1000);

const batchPayload = JSON.stringify({ assets: Array.from({ length: BATCH }, () => body) });
const tb = performance.now();
for (let done = 0; done < N; done += BATCH) {
  const payload =
    done + BATCH <= N ? batchPayload : JSON.stringify({ assets: Array.from({ length: N - done }, () => body) });
  const res = await server.app.inject({
    method: 'POST',
    url: '/v1/assets/bulk',
    headers: { ...headers, 'content-type': 'application/json' },
    payload,
  });
  if (res.statusCode !== 200) throw new Error(res.body.slice(0, 500));
}
const bulk = N / ((performance.now() - tb) / 1000);

const db = server.deps.db;
const bareRow = (id: string, now: number): AssetRow => ({
  id,
  org_id: org.orgId,
  file_id: id,
  original_file_id: id,
  version_number: 1,
  is_current: 1,
  object_type: 'Asset',
  filename: 'metadata-only',
  content_type: null,
  content_state: 'none',
  size: null,
  sha256: null,
  md5: null,
  blob_key: null,
  federated: 0,
  content_path: null,
  skip_transcode: 0,
  metadata_template_id: templateId,
  metadata: '[]',
  metadata_denormalized: '{}',
  technical_metadata: '{}',
  renditions: '{}',
  renditions_state: 'none',
  width: null,
  height: null,
  placeholder: null,
  deleted_at: null,
  deleted_by: null,
  created_event_sent: 1,
  created_by: org.adminUserId,
  updated_by: org.adminUserId,
  created_at: now,
  updated_at: now,
});
const t1 = performance.now();
for (let i = 0; i < N; i++) {
  const now = Date.now();
  const id = newId(now);
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('assets').values(bareRow(id, now)).execute();
    await trx
      .insertInto('asset_security')
      .values({ org_id: org.orgId, asset_id: id, template_id: org.defaultTemplateId })
      .execute();
  });
}
const raw = N / ((performance.now() - t1) / 1000);

const t2 = performance.now();
for (let done = 0; done < N; done += BATCH) {
  const now = Date.now();
  const ids = Array.from({ length: Math.min(BATCH, N - done) }, () => newId(now));
  await db.transaction().execute(async (trx) => {
    await insertRows(
      trx,
      'assets',
      ids.map((id) => bareRow(id, now)),
    );
    await insertRows(
      trx,
      'asset_security',
      ids.map((id) => ({ org_id: org.orgId, asset_id: id, template_id: org.defaultTemplateId })),
    );
  });
}
const rawMulti = N / ((performance.now() - t2) / 1000);
await server.close();
printTable(
  `Metadata-only asset creation, ${N} assets per row (${server.deps.engine}; ${cpus().length} CPUs; load average before the run ${loadBefore}, after ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')})`,
  ['path', 'assets/s', 'vs bare insert'],
  [
    ['bare insert (asset + security row, one transaction each)', fmt(raw, 0), '1.00'],
    [`bare multi-row insert (asset + security rows, ${BATCH} per transaction)`, fmt(rawMulti, 0), fmt(rawMulti / raw)],
    [`Tessera POST /v1/assets/asset (inject, ${CONCURRENCY} in flight)`, fmt(ours, 0), fmt(ours / raw)],
    [`Tessera POST /v1/assets/bulk (inject, ${BATCH} assets per request, 1 in flight)`, fmt(bulk, 0), fmt(bulk / raw)],
    ['popular open-source headless CMS (published)', '655', '—'],
    ['target', '≥ 2000', ''],
  ],
  {
    path: 'how the assets were created: bare rows written straight to the database, or whole requests through Tessera (HTTP parsing, credential check, template checks, metadata validation, rows, security grants and one outbox event per asset)',
    'assets/s': 'assets created per second (N divided by the wall time of the row)',
    'vs bare insert':
      'the row’s rate divided by the bare one-transaction-per-asset insert measured in the same run (1: as fast; above 1: faster)',
  },
);
