// Metadata-only asset creation in bulk through POST /v1/assets/asset (validation, permission and
// template checks, insert, outbox event) against bare inserts of the same rows, in the same run.
import { newId } from '../src/core/ids.ts';
import { benchOrg } from './assets-fixture.ts';
import { fmt, printTable, startBenchServer } from './lib.ts';

const N = Number(process.env.ASSETS_BENCH_CREATE ?? 5000);
const CONCURRENCY = 8;
const server = await startBenchServer();
const { org, headers, templateId } = await benchOrg(server);
const body = { metadataTemplateId: templateId, securityTemplateIds: [org.defaultTemplateId], metadata: [{ name: 'Title', value: 'Bulk' }, { name: 'Creator', value: 'Bench' }] };
for (let i = 0; i < 100; i++) await server.app.inject({ method: 'POST', url: '/v1/assets/asset', headers, payload: body });

let next = 0;
const t0 = performance.now();
await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
  while (next < N) {
    next++;
    const res = await server.app.inject({ method: 'POST', url: '/v1/assets/asset', headers, payload: body });
    if (res.statusCode !== 200) throw new Error(res.body);
  }
}));
const ours = N / ((performance.now() - t0) / 1000);

const db = server.deps.db;
const t1 = performance.now();
for (let i = 0; i < N; i++) {
  const now = Date.now();
  const id = newId(now);
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('assets').values({
      id, org_id: org.orgId, file_id: id, original_file_id: id, version_number: 1, is_current: 1, object_type: 'Asset', filename: 'metadata-only', content_type: null,
      content_state: 'none', size: null, sha256: null, md5: null, blob_key: null, federated: 0, content_path: null, skip_transcode: 0, metadata_template_id: templateId,
      metadata: '[]', metadata_denormalized: '{}', technical_metadata: '{}', renditions: '{}', renditions_state: 'none', width: null, height: null, deleted_at: null,
      created_event_sent: 1, created_by: org.adminUserId, updated_by: org.adminUserId, created_at: now, updated_at: now,
    }).execute();
    await trx.insertInto('asset_security').values({ org_id: org.orgId, asset_id: id, template_id: org.defaultTemplateId }).execute();
  });
}
const raw = N / ((performance.now() - t1) / 1000);
await server.close();
printTable(`Metadata-only asset creation, ${N} assets (${server.deps.engine})`, ['path', 'assets/s', 'vs bare insert'], [
  ['bare insert (asset + security row, one transaction each)', fmt(raw, 0), '1.00'],
  [`Tessera POST /v1/assets/asset (inject, ${CONCURRENCY} in flight)`, fmt(ours, 0), fmt(ours / raw)],
  ['popular open-source headless CMS (published)', '655', '—'],
  ['target', '≥ 2000', ''],
]);
