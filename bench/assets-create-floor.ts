// The floor of bulk creation over HTTP, run by assets-create.bench.ts as a process of its own: a
// bare node:http server that reads the same POST /v1/assets/bulk bodies, parses them and writes
// only the asset and security rows of each request with multi-row inserts in one transaction, with
// no authentication, validation, event, audit row or search document. Whatever Tessera does over
// HTTP, it cannot beat this on the same machine, engine and database.
// Env: DATABASE_URL, TESSERA_DATA_DIR, TESSERA_SECRET_KEY, PORT, FLOOR_ORG, FLOOR_USER.
import { createServer } from 'node:http';
import { toJson } from '../src/core/db/json.ts';
import { insertRows } from '../src/core/db/insert-rows.ts';
import { newId } from '../src/core/ids.ts';
import { parseConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import { benchAssetRow } from './assets-fixture.ts';

interface Item {
  metadataTemplateId: string;
  securityTemplateIds: string[];
  metadata: unknown[];
}

const deps = createDeps(parseConfig({ ...process.env, TESSERA_LOG_LEVEL: 'silent' }));
const orgId = process.env.FLOOR_ORG!;
const userId = process.env.FLOOR_USER!;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    try {
      const { assets } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { assets: Item[] };
      const now = Date.now();
      const rows = assets.map((item) =>
        benchAssetRow(
          { id: newId(now), orgId, templateId: item.metadataTemplateId, userId, now },
          { metadata: toJson(item.metadata) },
        ),
      );
      await deps.db.transaction().execute(async (trx) => {
        await insertRows(trx, 'assets', rows);
        await insertRows(
          trx,
          'asset_security',
          rows.flatMap((row, i) =>
            assets[i]!.securityTemplateIds.map((template_id) => ({ org_id: orgId, asset_id: row.id, template_id })),
          ),
        );
      });
      const body = JSON.stringify({ status: 'success', data: rows.map((r) => ({ id: r.id, fileId: r.file_id })) });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error));
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('Server listening'));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void deps.close().then(() => process.exit(0));
});
