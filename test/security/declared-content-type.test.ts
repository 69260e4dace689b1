import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assetWorker, createAsset, jpeg, pathOf } from '../helpers/assets.ts';
import { forEachEngine, json, type TestContext } from '../helpers/context.ts';
import { createTestOrg } from '../helpers/factories.ts';

/**
 * Issue 23, defect 15: the content type declared at create stands. A PUT to the upload URL
 * without a Content-Type of its own (curl's default application/x-www-form-urlencoded) recorded
 * that as the asset's type and its renditions fell back to a placeholder. The request's type now
 * counts only when none was declared and it says something; the bytes are the check.
 */
const SVG = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><rect width="40" height="30" fill="#c33"/></svg>\n',
);

async function row(ctx: TestContext, id: string) {
  return ctx.deps.db
    .selectFrom('assets')
    .select(['content_type', 'content_state', 'renditions'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

forEachEngine('security: the declared content type stands (defect 15)', (ctx) => {
  it("a PUT with curl's default Content-Type keeps the type declared at create, and the renditions are real", async () => {
    const org = await createTestOrg(ctx());
    const worker = assetWorker(ctx());
    try {
      for (const [filename, contentType, data] of [
        ['logo.svg', 'image/svg+xml', SVG],
        ['drawing', 'image/svg+xml', SVG],
        ['photo', 'image/jpeg', await jpeg(40, 30)],
      ] as const) {
        for (const header of ['application/x-www-form-urlencoded', 'application/octet-stream']) {
          const created = await createAsset(ctx(), org, { filename, contentType });
          const put = await ctx().inject({
            method: 'PUT',
            url: pathOf(created.url!),
            payload: data,
            headers: { 'content-type': header },
          });
          assert.equal(put.statusCode, 200, put.body);
          await worker.drain();
          const r = await row(ctx(), created.objectId);
          assert.equal(r.content_type, contentType, `${filename} ${header}`);
          const renditions = JSON.parse(r.renditions) as Record<string, { placeholder?: boolean }>;
          assert.ok(renditions.imageThumb, `${filename}: a thumbnail`);
          assert.equal(renditions.imageThumb.placeholder, undefined, `${filename} ${header}: not a placeholder`);
          const asset = json(
            await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: org.admin.headers }),
          );
          assert.equal(asset.contentType, contentType);
        }
      }
    } finally {
      await worker.stop();
    }
  });

  it('without a type declared at create, a meaningful request type or the file name decides; bytes contradicting the declared type are refused', async () => {
    const org = await createTestOrg(ctx());
    const undeclared = await createAsset(ctx(), org, { filename: 'vector' });
    assert.equal(
      (
        await ctx().inject({
          method: 'PUT',
          url: pathOf(undeclared.url!),
          payload: SVG,
          headers: { 'content-type': 'image/svg+xml' },
        })
      ).statusCode,
      200,
    );
    assert.equal((await row(ctx(), undeclared.objectId)).content_type, 'image/svg+xml');
    const named = await createAsset(ctx(), org, { filename: 'named.svg' });
    assert.equal(
      (
        await ctx().inject({
          method: 'PUT',
          url: pathOf(named.url!),
          payload: SVG,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        })
      ).statusCode,
      200,
    );
    assert.equal((await row(ctx(), named.objectId)).content_type, 'image/svg+xml');
    // Declared PNG at create: JPEG bytes contradict it, whatever the PUT's header says.
    const png = await createAsset(ctx(), org, { filename: 'shot', contentType: 'image/png' });
    const res = await ctx().inject({
      method: 'PUT',
      url: pathOf(png.url!),
      payload: await jpeg(8, 8),
      headers: { 'content-type': 'image/jpeg' },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(json(res).details[0].message, /content is image\/jpeg but the declared type says image\/png/);
    assert.equal((await row(ctx(), png.objectId)).content_state, 'pending');
  });
});
