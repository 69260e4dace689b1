import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../../../test/helpers/factories.ts';
import type { Worker } from '../../../../../core/jobs/worker.ts';
import { assetWorker, pathOf, uploadAsset } from '../../../../../../test/helpers/assets.ts';
import { makeDocx, makeOdt, makePptx, makeXlsx } from '../media.fixtures.ts';

forEachEngine('assets: office documents and text', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());
  const get = (id: string) =>
    ctx()
      .inject({ method: 'GET', url: `/v1/asset/${id}`, headers: org.admin.headers })
      .then((r) => r.json());
  const found = (term: string) =>
    ctx()
      .inject({
        method: 'POST',
        url: '/v1/search/keyword',
        headers: org.admin.headers,
        payload: { searchTerm: [term], keywordSearchField: 'content' },
      })
      .then((r) => (r.json() as { result: { objectId: string }[] }).result.map((x) => x.objectId));

  it('extracts the text of docx, pptx, xlsx, odt, Markdown and plain text, searchable as content; without LibreOffice the thumbnail is a placeholder and technical metadata says why', async () => {
    const files: [string, Buffer, string, Record<string, unknown>][] = [
      [
        'memo.docx',
        makeDocx(['Budget memo about &amp; aardvarks', 'Second paragraph']),
        'aardvarks',
        { title: 'Doc title', author: 'Grace', pageCount: 1 },
      ],
      [
        'deck.pptx',
        makePptx(['Opening slide', 'Closing slide with bumblebees']),
        'bumblebees',
        { slideCount: 2, author: 'Linus' },
      ],
      ['sheet.xlsx', makeXlsx(['Revenue', 'Chinchillas'], [42.5]), 'chinchillas', { sheetCount: 1 }],
      ['letter.odt', makeOdt(['Dear reader', 'about platypuses']), 'platypuses', { title: 'Open doc', pageCount: 2 }],
      ['notes.md', Buffer.from('# Heading\n\nSome *markdown* on narwhals.\n'), 'narwhals', { lineCount: 4 }],
      ['plain.txt', Buffer.from('Just text about wombats.'), 'wombats', {}],
    ];
    for (const [name, bytes, word, props] of files) {
      const created = await uploadAsset(ctx(), org, bytes, name);
      await worker.drain();
      const asset = await get(created.objectId);
      const t = asset.technicalMetadata;
      assert.equal(asset.renditionsState, 'placeholder', `${name}: ${JSON.stringify(t)}`);
      for (const [k, v] of Object.entries(props)) assert.equal(t.document_metadata[k], v, `${name} ${k}`);
      assert.deepEqual(await found(word), [created.objectId], `${name}: "${word}" found as content`);
      const thumb = await ctx().inject({
        method: 'GET',
        url: pathOf(asset.renditions.imageThumb),
        headers: org.admin.headers,
      });
      assert.equal(thumb.statusCode, 200);
      if (name.endsWith('x') || name.endsWith('odt'))
        assert.match(t.previewNote, /LibreOffice is not installed.*TESSERA_SOFFICE_PATH/, name);
    }
    assert.deepEqual(await found('42.5'), await found('chinchillas'), 'numbers in sheets are text too');
  });

  it('fails a corrupt office file cleanly with the reason recorded', async () => {
    const created = await uploadAsset(
      ctx(),
      org,
      Buffer.from('PK\u0003\u0004 this is not a zip at all'),
      'broken.docx',
    );
    await worker.drain();
    const asset = await get(created.objectId);
    assert.equal(asset.renditionsState, 'failed');
    assert.match(asset.technicalMetadata.renditionError, /zip|document/);
  });
});
