import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { assetWorker, defaultTemplate, jpeg } from '../../../../test/helpers/assets.ts';

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

forEachEngine('assets: form upload (multipart/form-data)', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());

  it('a multipart body the parser cannot read is a 400 naming the body', async () => {
    for (const contentType of ['multipart/form-data; boundary=zzz', 'multipart/form-data']) {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/asset/upload',
        headers: { ...org.admin.headers, 'content-type': contentType },
        payload: 'garbage',
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).details[0].field, 'body');
      assert.match(json(res).details[0].message, /not well-formed multipart/);
    }
  });

  it('accepts a small file as multipart/form-data in one request', async () => {
    const { id } = await defaultTemplate(ctx(), org);
    const data = await jpeg(60, 40);
    const form = multipartBody(
      {
        metadataTemplateId: id,
        securityTemplateIds: JSON.stringify([org.defaultTemplateId]),
        metadata: JSON.stringify([{ name: 'Title', value: 'Form' }]),
      },
      { name: 'form.jpg', type: 'image/jpeg', data },
    );
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/upload',
      headers: { ...org.admin.headers, 'content-type': form.contentType },
      payload: form.payload,
    });
    assert.equal(res.statusCode, 200, res.body);
    const asset = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${json(res).objectId}`, headers: org.admin.headers }),
    );
    assert.equal(asset.fileSizeInBytes, data.length);
    assert.equal(asset.metadataDenormalized.title, 'Form');
    assert.equal(asset.filename, 'form.jpg');
    const wrong = multipartBody(
      { metadataTemplateId: id, securityTemplateIds: org.defaultTemplateId },
      { name: 'fake.png', type: 'image/png', data },
    );
    const bad = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/upload',
      headers: { ...org.admin.headers, 'content-type': wrong.contentType },
      payload: wrong.payload,
    });
    assert.equal(bad.statusCode, 400, bad.body);
  });
});
