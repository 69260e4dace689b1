import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { assetWorker, uploadAsset } from '../../../../test/helpers/assets.ts';

// A few hundred bytes of SVG whose filter takes libvips/librsvg seconds to render (about 2.5 s on an idle core; the issue's
// "filter bomb", scaled down): with TESSERA_RENDITION_TIMEOUT_SECONDS=1 its rendition is abandoned.
const bomb = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1400" height="1400"><filter id="f" x="0" y="0" width="100%" height="100%"><feTurbulence baseFrequency="0.01" numOctaves="4"/><feMorphology radius="6" operator="dilate"/></filter><rect width="1400" height="1400" filter="url(#f)"/></svg>');

forEachEngine('assets: rendition limits (issue 23, defect 7)', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());

  it('abandons a rendition that takes longer than TESSERA_RENDITION_TIMEOUT_SECONDS: failed, named, nothing referenced', async () => {
    const created = await uploadAsset(ctx(), org, bomb, 'bomb.svg', { contentType: 'image/svg+xml' });
    await worker.drain();
    const asset = (await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers: org.admin.headers })).json();
    assert.equal(asset.renditionsState, 'failed');
    assert.match(asset.technicalMetadata.renditionError, /took longer than 1 s to render \(TESSERA_RENDITION_TIMEOUT_SECONDS\)/);
    assert.deepEqual(Object.keys(asset.renditions).filter((k) => k.startsWith('image') || k.startsWith('mezz')), []);
  });
}, { env: { TESSERA_RENDITION_TIMEOUT_SECONDS: '1' } });
