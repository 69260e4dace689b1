import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { defaultTemplate, jpeg } from '../helpers/assets.ts';
import { forEachEngine, json, type TestContext } from '../helpers/context.ts';
import { createTestOrg, type TestOrg } from '../helpers/factories.ts';

/**
 * Issue 23, defect 9: a refused form upload keeps nothing. An oversized multipart/form-data upload
 * answered 413 but kept a truncated, visible asset; now the file is received (and checked) before
 * anything is created, so a 413, a wrong checksum or bytes contradicting the declared type leave
 * no asset, no version, no upload record and no blob.
 */
const PART = 5 * 1024 * 1024; // TESSERA_UPLOAD_PART_SIZE's smallest value

function multipartBody(fields: Record<string, string>, file: { name: string; type: string; data: Buffer }) {
  const boundary = `----tessera${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`,
    ),
    file.data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Every file under a directory (blobs and staging live in the data directory). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => !/\.(db|sqlite)(-wal|-shm|-journal)?$/.test(f));
}

async function kept(ctx: TestContext, org: TestOrg) {
  const db = ctx.deps.db;
  const assets = await db.selectFrom('assets').select('id').where('org_id', '=', org.orgId).execute();
  const uploads = await db.selectFrom('asset_uploads').select('id').where('org_id', '=', org.orgId).execute();
  return { assets: assets.length, uploads: uploads.length, files: filesUnder(ctx.dataDir).sort() };
}

forEachEngine(
  'security: a refused form upload keeps nothing',
  (ctx) => {
    it('an oversized multipart/form-data upload is a 413 that leaves no asset, version, upload or blob; so are a wrong checksum and contradicting bytes', async () => {
      const org = await createTestOrg(ctx());
      const { id } = await defaultTemplate(ctx(), org);
      const fields = { metadataTemplateId: id, securityTemplateIds: JSON.stringify([org.defaultTemplateId]) };
      const send = (form: { payload: Buffer; contentType: string }) =>
        ctx().inject({
          method: 'POST',
          url: '/v1/asset/upload',
          headers: { ...org.admin.headers, 'content-type': form.contentType },
          payload: form.payload,
        });
      const image = await jpeg(32, 32);
      // An existing asset: a refused new version of it keeps nothing either.
      const first = await send(multipartBody(fields, { name: 'first.jpg', type: 'image/jpeg', data: image }));
      assert.equal(first.statusCode, 200, first.body);
      const before = await kept(ctx(), org);
      const big = Buffer.concat([image, Buffer.alloc(PART + 4096 - image.length, 7)]);
      const refused = [
        { status: 413, form: multipartBody(fields, { name: 'big.jpg', type: 'image/jpeg', data: big }) },
        {
          status: 413,
          form: multipartBody(
            { ...fields, originalFileId: json(first).objectId },
            { name: 'big-version.jpg', type: 'image/jpeg', data: big },
          ),
        },
        {
          status: 400,
          form: multipartBody(
            { ...fields, checksum: 'a'.repeat(64) },
            { name: 'sum.jpg', type: 'image/jpeg', data: image },
          ),
        },
        { status: 400, form: multipartBody(fields, { name: 'fake.png', type: 'image/png', data: image }) },
      ];
      for (const { status, form } of refused) {
        const res = await send(form);
        assert.equal(res.statusCode, status, res.body);
        if (status === 413) assert.match(json(res).message, /nothing was kept/);
        assert.deepEqual(await kept(ctx(), org), before);
      }
      const search = json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/search/keyword',
          headers: org.admin.headers,
          payload: { searchTerm: ['*'] },
        }),
      );
      assert.deepEqual(
        search.result.map((r: { filename: string }) => r.filename),
        ['first.jpg'],
      );
      const versions = json(
        await ctx().inject({
          method: 'GET',
          url: `/v1/asset/${json(first).objectId}/version`,
          headers: org.admin.headers,
        }),
      );
      assert.equal(versions.length, 1);
      // Just within the limit is still accepted.
      const fits = await send(
        multipartBody(fields, { name: 'fits.jpg', type: 'image/jpeg', data: big.subarray(0, PART) }),
      );
      assert.equal(fits.statusCode, 200, fits.body);
    });
  },
  { env: { TESSERA_UPLOAD_PART_SIZE: String(PART) } },
);
