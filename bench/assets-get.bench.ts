// GET /v1/assets/asset/{id} with 100,000 assets in the database (SQLite by default; DATABASE_URL
// for PostgreSQL): p50/p99 over the full HTTP stack (inject: routing, token check, permission
// join, template-aware presentation) against the bare primary-key lookup in the same run.
import { randomInt } from 'node:crypto';
import type { AssetRow } from '../src/features/assets/index.ts';
import { newId } from '../src/core/ids.ts';
import { benchAssetRow, benchOrg } from './assets-fixture.ts';
import { fmt, percentile, printTable, startBenchServer } from './lib.ts';

const N = Number(process.env.ASSETS_BENCH_ASSETS ?? 100_000);
const REQUESTS = Number(process.env.ASSETS_BENCH_REQUESTS ?? 3000);
const server = await startBenchServer();
const { org, headers, templateId } = await benchOrg(server);
const db = server.deps.db;
const ids: string[] = [];
const now = Date.now();
for (let i = 0; i < N; i += 1000) {
  const rows: AssetRow[] = [];
  for (let j = i; j < Math.min(N, i + 1000); j++) {
    const id = newId(now + j);
    const fileId = newId(now + j);
    ids.push(id);
    rows.push(
      benchAssetRow(
        { id, fileId, orgId: org.orgId, templateId, userId: org.adminUserId, now },
        {
          filename: `asset-${j}.jpg`,
          content_type: 'image/jpeg',
          content_state: 'available',
          size: 1000 + j,
        },
      ),
    );
  }
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('assets').values(rows).execute();
    await trx
      .insertInto('asset_security')
      .values(rows.map((r) => ({ org_id: org.orgId, asset_id: r.id, template_id: org.defaultTemplateId })))
      .execute();
  });
}
const pick = () => ids[randomInt(ids.length)]!;
const raw: number[] = [];
const http: number[] = [];
for (let i = 0; i < 200; i++) await server.app.inject({ method: 'GET', url: `/v1/assets/asset/${pick()}`, headers });
for (let i = 0; i < REQUESTS; i++) {
  let t = performance.now();
  await db.selectFrom('assets').selectAll().where('id', '=', pick()).executeTakeFirst();
  raw.push(performance.now() - t);
  t = performance.now();
  const res = await server.app.inject({ method: 'GET', url: `/v1/assets/asset/${pick()}`, headers });
  http.push(performance.now() - t);
  if (res.statusCode !== 200) throw new Error(res.body);
}
await server.close();
printTable(
  `GET /v1/assets/asset/{id} with ${N} assets (${server.deps.engine}), ${REQUESTS} requests`,
  ['path', 'p50 ms', 'p99 ms', 'target'],
  [
    ['bare SELECT by primary key (baseline)', fmt(percentile(raw, 50), 3), fmt(percentile(raw, 99), 3), ''],
    ['Tessera GET /v1/assets/asset/{id}', fmt(percentile(http, 50), 3), fmt(percentile(http, 99), 3), 'p99 ≤ 5 ms'],
    ['reference (published average)', '265', '—', ''],
  ],
);
