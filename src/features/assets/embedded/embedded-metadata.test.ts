import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { assetWorker, createAsset, defaultTemplate, pathOf, uploadAsset } from '../../../../test/helpers/assets.ts';
import { ExifTool } from 'exiftool-vendored';
import { readEmbedded } from './read-embedded.ts';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const XMP = (title: string, keywords: string[], creator: string) =>
  `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" xmlns:xmpRights="http://ns.adobe.com/xap/1.0/rights/" photoshop:Credit="ACME Photo &amp; Co" photoshop:City="Lyon"><dc:title><rdf:Alt><rdf:li xml:lang="x-default">${title}</rdf:li></rdf:Alt></dc:title><dc:description><rdf:Alt><rdf:li xml:lang="x-default">Waves at dusk</rdf:li></rdf:Alt></dc:description><dc:subject><rdf:Bag>${keywords.map((k) => `<rdf:li>${k}</rdf:li>`).join('')}</rdf:Bag></dc:subject><dc:creator><rdf:Seq><rdf:li>${creator}</rdf:li></rdf:Seq></dc:creator><dc:rights><rdf:Alt><rdf:li xml:lang="x-default">© 2026 Ann Smith</rdf:li></rdf:Alt></dc:rights><xmpRights:UsageTerms><rdf:Alt><rdf:li xml:lang="x-default">Editorial use only</rdf:li></rdf:Alt></xmpRights:UsageTerms></rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;

/** A real JPEG (or TIFF) with EXIF and XMP written by sharp. */
async function tagged(
  format: 'jpeg' | 'tiff',
  title: string,
  keywords: string[],
  creator = 'Ann Smith',
  colour = '#336699',
): Promise<Buffer> {
  return sharp({ create: { width: 64, height: 48, channels: 3, background: colour } })
    .withExif({ IFD0: { ImageDescription: 'exif description', Artist: 'Exif Artist', Copyright: 'Exif copyright' } })
    .withXmp(XMP(title, keywords, creator))
    .toFormat(format)
    .toBuffer();
}

/** A JPEG with IPTC-IIM only (written by ExifTool, the way agencies' tools do). */
async function iptcOnly(fields: Record<string, string | string[]>): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-iptc-test-'));
  const et = new ExifTool({ maxProcs: 1 });
  try {
    const file = join(dir, 'a.jpg');
    await writeFile(
      file,
      await sharp({ create: { width: 32, height: 32, channels: 3, background: '#aa3300' } })
        .jpeg()
        .toBuffer(),
    );
    await et.write(file, fields, { writeArgs: ['-overwrite_original', '-codedcharacterset=utf8'] });
    return await readFile(file);
  } finally {
    await et.end();
    await rm(dir, { recursive: true, force: true });
  }
}

forEachEngine('assets: embedded IPTC, XMP and EXIF metadata in and back out', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());
  const simple = async (id: string) => {
    const r = await ctx().inject({ method: 'GET', url: `/v1/assets/asset/${id}`, headers: org.admin.headers });
    assert.equal(r.statusCode, 200, r.body);
    return Object.fromEntries(
      (json(r).data.metadata as { name: string; value: unknown }[]).map((m) => [m.name, m.value]),
    );
  };
  const search = async (body: unknown) =>
    json(await ctx().inject({ method: 'POST', url: '/v1/search/keyword', headers: org.admin.headers, payload: body }));

  it('reads EXIF from a HEIC (written by ExifTool) onto the Default template at upload', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-heic-exif-'));
    const et = new ExifTool({ maxProcs: 1 });
    let heic: Buffer;
    try {
      const file = join(dir, 'photo.heic');
      await writeFile(
        file,
        await readFile(new URL('../../../../test/fixtures/media/sample-64x48.heic', import.meta.url)),
      );
      await et.write(
        file,
        { Artist: 'Heic Artist', ImageDescription: 'A HEIC from a phone', Copyright: 'Heic copyright' } as never,
        { writeArgs: ['-overwrite_original'] },
      );
      heic = await readFile(file);
    } finally {
      await et.end();
      await rm(dir, { recursive: true, force: true });
    }
    const read = await readEmbedded(heic);
    assert.equal(read['EXIF:Artist'], 'Heic Artist', JSON.stringify(read));
    assert.equal(read['EXIF:Copyright'], 'Heic copyright');
    // exifr reads the EXIF of a HEIC; its XMP is read through ExifTool (the next test).
    const created = await uploadAsset(ctx(), org, heic, 'phone.heic');
    await worker.drain();
    const values = await simple(created.objectId);
    assert.equal(values.Description, 'A HEIC from a phone');
    assert.equal(values.Creator, 'Heic Artist');
    assert.equal(values.Copyright, 'Heic copyright');
  });

  it('reads the XMP of a HEIC (keywords, title, usage terms) through ExifTool, where exifr reads none: searchable at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-heic-xmp-'));
    const et = new ExifTool({ maxProcs: 1 });
    let heic: Buffer;
    try {
      const file = join(dir, 'photo.heic');
      await writeFile(
        file,
        await readFile(new URL('../../../../test/fixtures/media/sample-64x48.heic', import.meta.url)),
      );
      await et.write(
        file,
        {
          'XMP-dc:Subject': ['lighthouse', 'coastline'],
          'XMP-dc:Title': 'Lighthouse at dawn',
          'XMP-xmpRights:UsageTerms': 'Web only',
        } as never,
        { writeArgs: ['-overwrite_original'] },
      );
      heic = await readFile(file);
    } finally {
      await et.end();
      await rm(dir, { recursive: true, force: true });
    }
    const read = await readEmbedded(heic);
    assert.equal(read['XMP-dc:Subject'], undefined, 'exifr alone does not see the XMP of a HEIC');
    const created = await uploadAsset(ctx(), org, heic, 'dawn.heic');
    await worker.drain();
    const values = await simple(created.objectId);
    assert.deepEqual(values.Keywords, ['lighthouse', 'coastline']);
    assert.equal(values.Title, 'Lighthouse at dawn');
    assert.equal(values['Usage Terms'], 'Web only');
    assert.equal((await search({ searchTerm: ['coastline'] })).totalCount, 1);
  });

  it('maps XMP and EXIF of a JPEG and a TIFF onto the Default template at upload: searchable, facetable, keywords a list, in both encodings', async () => {
    const a = await uploadAsset(
      ctx(),
      org,
      await tagged('jpeg', 'Sunset &amp; sea', ['sunset', 'seascape']),
      'sunset.jpg',
    );
    const b = await uploadAsset(
      ctx(),
      org,
      await tagged('tiff', 'Harbour lights', ['harbour', 'seascape'], 'Bo Chen'),
      'harbour.tif',
    );
    await worker.drain();
    const va = await simple(a.objectId);
    assert.equal(va.Title, 'Sunset & sea');
    assert.equal(va.Description, 'Waves at dusk', 'XMP dc:description comes before EXIF ImageDescription');
    assert.deepEqual(va.Keywords, ['sunset', 'seascape']);
    assert.equal(va.Creator, 'Ann Smith');
    assert.equal(va.Copyright, '© 2026 Ann Smith');
    assert.equal(va['Credit Line'], 'ACME Photo & Co');
    const vb = await simple(b.objectId);
    assert.equal(vb.Title, 'Harbour lights');
    assert.deepEqual(vb.Keywords, ['harbour', 'seascape']);
    // Legacy encoding: the keyword list under the attribute's id.
    const t = await defaultTemplate(ctx(), org);
    const legacy = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${a.objectId}`, headers: org.admin.headers }),
    );
    assert.deepEqual(
      legacy.metadata.find((m: { metadataDefinitionId: string }) => m.metadataDefinitionId === t.attr('keywords'))
        .metadataDefinitionValue,
      ['sunset', 'seascape'],
    );

    const found = await search({ searchTerm: ['seascape'] });
    assert.deepEqual(found.result.map((r: { objectId: string }) => r.objectId).sort(), [a.objectId, b.objectId].sort());
    assert.equal((await search({ searchTerm: ['Chen'] })).totalCount, 1);
    const keywords = found.facets.find((f: { facet_name: string }) => f.facet_name === 'Keywords');
    assert.deepEqual(
      keywords.values.find((v: { key: string }) => v.key === 'seascape'),
      { key: 'seascape', doc_count: 2 },
    );
    assert.deepEqual(
      keywords.values.find((v: { key: string }) => v.key === 'sunset'),
      { key: 'sunset', doc_count: 1 },
    );
    const creators = found.facets.find((f: { facet_name: string }) => f.facet_name === 'Creator');
    assert.deepEqual(creators.values.map((v: { key: string }) => v.key).sort(), ['Ann Smith', 'Bo Chen']);
  });

  it('reads IPTC-IIM (keywords, by-line, caption, copyright) when there is no XMP', async () => {
    const bytes = await iptcOnly({
      'IPTC:ObjectName': 'Market day',
      'IPTC:Keywords': ['market', 'fruit'],
      'IPTC:By-line': 'Cleo Dubois',
      'IPTC:Caption-Abstract': 'Stalls in the square',
      'IPTC:CopyrightNotice': '© Cleo',
      'IPTC:City': 'Arles',
    });
    const a = await uploadAsset(ctx(), org, bytes, 'market.jpg');
    await worker.drain();
    const v = await simple(a.objectId);
    assert.equal(v.Title, 'Market day');
    assert.deepEqual(v.Keywords, ['market', 'fruit']);
    assert.equal(v.Creator, 'Cleo Dubois');
    assert.equal(v.Description, 'Stalls in the square');
    assert.equal(v.Copyright, '© Cleo');
    assert.equal((await search({ searchTerm: ['fruit'] })).totalCount, 1);
  });

  it('never overwrites a value the user set, unless the version upload asks (overwriteEmbeddedMetadata)', async () => {
    const a = await uploadAsset(ctx(), org, await tagged('jpeg', 'First title', ['one']), 'v.jpg', {
      metadata: [{ name: 'Creator', value: 'Set by hand' }],
    });
    await worker.drain();
    let v = await simple(a.objectId);
    assert.equal(v.Creator, 'Set by hand', "a value sent at creation is the user's");
    assert.equal(v.Title, 'First title');
    // A new version with other embedded values: the inherited values stay.
    const v2 = await uploadAsset(
      ctx(),
      org,
      await tagged('jpeg', 'Second title', ['two'], 'Someone Else', '#112233'),
      'v.jpg',
      { originalFileId: a.originalFileId },
    );
    await worker.drain();
    v = await simple(v2.objectId);
    assert.equal(v.Title, 'First title');
    assert.equal(v.Creator, 'Set by hand');
    assert.deepEqual(v.Keywords, ['one']);
    // Asked: the embedded values replace them.
    const v3 = await uploadAsset(
      ctx(),
      org,
      await tagged('jpeg', 'Third title', ['three'], 'Third Creator', '#445566'),
      'v.jpg',
      { originalFileId: a.originalFileId, overwriteEmbeddedMetadata: true },
    );
    await worker.drain();
    v = await simple(v3.objectId);
    assert.equal(v.Title, 'Third title');
    assert.equal(v.Creator, 'Third Creator');
    assert.deepEqual(v.Keywords, ['three']);
  });

  it('writes the current metadata back into the downloaded file (?embed=true) and leaves the stored original unchanged', async () => {
    const original = await tagged('jpeg', 'Old title', ['old']);
    const a = await uploadAsset(ctx(), org, original, 'embed.jpg');
    await worker.drain();
    const patch = await ctx().inject({
      method: 'PATCH',
      url: `/v1/assets/asset/${a.objectId}`,
      headers: org.admin.headers,
      payload: {
        metadata: [
          { name: 'Title', value: 'New title' },
          { name: 'Keywords', value: ['alpha', 'beta'] },
          { name: 'Creator', value: 'Zoë Müller' },
        ],
      },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    const link = json(
      await ctx().inject({
        method: 'GET',
        url: `/v1/asset/${a.objectId}/content?embed=true`,
        headers: org.admin.headers,
      }),
    ).presignedURL;
    const res = await ctx().inject({ method: 'GET', url: pathOf(link) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'image/jpeg');
    const out = await readEmbedded(res.rawPayload);
    assert.equal(out['XMP-dc:Title'], 'New title');
    assert.deepEqual(out['XMP-dc:Subject'], ['alpha', 'beta']);
    assert.deepEqual(out['XMP-dc:Creator'], ['Zoë Müller']);
    assert.equal(out['IPTC:ObjectName'], 'New title');
    assert.deepEqual(out['IPTC:Keywords'], ['alpha', 'beta']);
    assert.deepEqual(out['IPTC:By-line'], ['Zoë Müller']);
    assert.equal(out['EXIF:Artist'], 'Zoë Müller');
    // Same pixels: the image data is not re-encoded.
    const [p1, p2] = await Promise.all([sharp(original).raw().toBuffer(), sharp(res.rawPayload).raw().toBuffer()]);
    assert.ok(p1.equals(p2));
    // The stored original is unchanged.
    const plain = json(
      await ctx().inject({ method: 'GET', url: `/v1/asset/${a.objectId}/content`, headers: org.admin.headers }),
    ).presignedURL;
    const orig = await ctx().inject({ method: 'GET', url: pathOf(plain) });
    assert.ok(orig.rawPayload.equals(original));
    // A second download of the same metadata is served from the stored copy (same ETag).
    const again = await ctx().inject({ method: 'GET', url: pathOf(link) });
    assert.equal(again.headers.etag, res.headers.etag);
    // A file type ExifTool does not write into: a clear 400.
    const meta = await createAsset(ctx(), org, { filename: 'doc.pdf' });
    await ctx().inject({
      method: 'PUT',
      url: pathOf(meta.url!),
      payload: Buffer.from('%PDF-1.4\n%%EOF\n'),
      headers: { 'content-type': 'application/octet-stream' },
    });
    const bad = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${meta.objectId}/content?embed=true`,
      headers: org.admin.headers,
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.equal(json(bad).details[0].field, 'query.embed');
  });

  it('lets an administrator declare the embedded fields of an attribute, validated', async () => {
    const made = await ctx().inject({
      method: 'POST',
      url: '/v1/metadata/attributes',
      headers: org.admin.headers,
      payload: { name: 'Shot in', type: 'text', embeddedFields: ['xmp-photoshop:city', 'IPTC:City'] },
    });
    assert.equal(made.statusCode, 201, made.body);
    assert.deepEqual(json(made).embeddedFields, ['XMP-photoshop:City', 'IPTC:City']);
    const got = json(
      await ctx().inject({
        method: 'GET',
        url: `/v1/metadata/attributes/${json(made).id}`,
        headers: org.admin.headers,
      }),
    );
    assert.deepEqual(got.embeddedFields, ['XMP-photoshop:City', 'IPTC:City']);
    const changed = await ctx().inject({
      method: 'PATCH',
      url: `/v1/metadata/attributes/${json(made).id}`,
      headers: org.admin.headers,
      payload: { embeddedFields: ['EXIF:GPSPosition'] },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual(json(changed).embeddedFields, ['EXIF:GPSPosition']);
    for (const [payload, field] of [
      [{ name: 'Bad 1', type: 'text', embeddedFields: ['XMP-dc:Nope'] }, 'body.embeddedFields.0'],
      [{ name: 'Bad 2', type: 'text', embeddedFields: ['IPTC:City', 'iptc:city'] }, 'body.embeddedFields.1'],
      [{ name: 'Bad 3', type: 'table', tableFieldIds: [], embeddedFields: ['IPTC:City'] }, 'body.embeddedFields'],
    ] as const) {
      const r = await ctx().inject({
        method: 'POST',
        url: '/v1/metadata/attributes',
        headers: org.admin.headers,
        payload,
      });
      assert.equal(r.statusCode, 400, r.body);
      assert.equal(json(r).details[0].field, field, r.body);
    }
    const t = await defaultTemplate(ctx(), org);
    const seeded = json(
      await ctx().inject({
        method: 'GET',
        url: `/v1/metadata/attributes/${t.attr('keywords')}`,
        headers: org.admin.headers,
      }),
    );
    assert.deepEqual(seeded.embeddedFields, ['XMP-dc:Subject', 'IPTC:Keywords']);
    assert.equal(seeded.isMultipleSelect, true);
  });
});
