import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { login } from './helpers/auth.ts';
import { assetWorker, uploadAsset } from './helpers/assets.ts';
import type { Worker } from '../src/core/jobs/worker.ts';

/** Issue 24, item 6: the reference's Asset fields (§7.1) and the collection-share envelope (§9.6). */
forEachEngine('compatibility: asset fields (issue 24, item 6)', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  let headers: Record<string, string>;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
    const session = await login(ctx(), org.admin);
    // A real client's headers: the gateway key, AccessToken and Authorization together, JSON on every call.
    headers = {
      'x-api-key': 'customer-gateway-key',
      accesstoken: session.session.accessToken,
      authorization: session.session.authorization,
      'content-type': 'application/json',
    };
  });
  after(() => worker.stop());

  it("technicalMetadata.image_metadata carries the reference's ExifTool-style keys beside Tessera's own (a JPEG with an sRGB ICC profile at 300 dpi)", async () => {
    const bytes = await sharp({
      create: { width: 320, height: 240, channels: 3, background: { r: 20, g: 90, b: 160 } },
    })
      .withIccProfile('srgb')
      .withMetadata({ density: 300 })
      .jpeg({ quality: 85 })
      .toBuffer();
    const created = await uploadAsset(ctx(), org, bytes, 'harbour.jpg');
    await worker.drain();
    const asset = json(await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}/`, headers }));
    const m = asset.technicalMetadata.image_metadata;
    assert.equal(m.fileType, 'JPEG');
    assert.equal(m.fileTypeExtension, 'jpg');
    assert.equal(m.mimeType, 'image/jpeg');
    assert.equal(m.imageWidth, 320);
    assert.equal(m.imageHeight, 240);
    assert.equal(m.imageSize, '320x240');
    assert.equal(m.bitsPerSample, 8);
    assert.equal(m.colorComponents, 3);
    assert.equal(m.encodingProcess, 'Baseline DCT, Huffman coding');
    assert.equal(m.yCbCrSubSampling, 'YCbCr4:2:0 (2 2)');
    assert.equal(m.xResolution, 300);
    assert.equal(m.yResolution, 300);
    assert.equal(m.resolutionUnit, 'inches');
    assert.equal(m.megapixels, 0.08);
    assert.equal(m.colorSpaceData, 'RGB');
    assert.equal(m.profileConnectionSpace, 'XYZ');
    assert.equal(m.profileClass, 'Display Device Profile');
    assert.equal(m.profileFileSignature, 'acsp');
    assert.match(m.profileVersion, /^\d+\.\d+\.\d+$/);
    assert.match(m.profileDateTime, /^\d{4}:\d{2}:\d{2} \d{2}:\d{2}:\d{2}$/);
    assert.match(m.profileDescription, /sRGB/i);
    assert.equal(typeof m.profileCopyright, 'string');
    assert.equal(m.interpretation, 'srgb', "Tessera's own keys stay");
    assert.equal(asset.technicalMetadata.tenovos_metadata.fileSizeInBytes, bytes.length);
  });

  it('a PNG gets its colour type and sample depth; renditions carry fpo and integer width and height everywhere an Asset is read', async () => {
    const bytes = await sharp({
      create: { width: 90, height: 60, channels: 4, background: { r: 1, g: 2, b: 3, alpha: 0.5 } },
    })
      .png()
      .toBuffer();
    const created = await uploadAsset(ctx(), org, bytes, 'mark.png');
    await worker.drain();
    const legacy = json(await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}`, headers }));
    const m = legacy.technicalMetadata.image_metadata;
    assert.equal(m.colorType, 'RGB with Alpha');
    assert.equal(m.bitsPerSample, 8);
    assert.equal(m.colorComponents, 4);
    const reads = [
      legacy.renditions,
      json(await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}/latest`, headers })).renditions,
      json(await ctx().inject({ method: 'GET', url: `/v1/asset/${created.objectId}/version`, headers }))[0].renditions,
      json(await ctx().inject({ method: 'GET', url: `/v1/assets/asset/${created.objectId}`, headers })).data.renditions,
      json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/search/keyword',
          headers,
          payload: { from: 0, limit: 10, searchTerm: ['mark.png'], operation: 'AND' },
        }),
      ).result.find((r: { objectId: string }) => r.objectId === created.objectId).renditions,
    ];
    for (const renditions of reads) {
      assert.ok(renditions.fpo, 'fpo');
      assert.ok(Number.isInteger(renditions.width) && Number.isInteger(renditions.height), JSON.stringify(renditions));
      assert.deepEqual([renditions.width, renditions.height], [90, 60]);
    }
  });

  it('presignedURL, linkType, relationshipId and secondaryId are filled only where the reference fills them: the download link and the relationship read, not Asset reads', async () => {
    const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
    const schemaOf = (path: string) => doc.paths[path].get.responses['200'].content['application/json'].schema;
    for (const field of ['presignedURL', 'linkType', 'relationshipId', 'secondaryId']) {
      assert.equal(doc.components.schemas.Asset.properties[field], undefined, `Asset does not declare ${field}`);
      assert.equal(doc.components.schemas.ActionObject.properties[field], undefined, `ActionObject: ${field}`);
    }
    assert.ok(schemaOf('/v1/asset/{id}/content').required.includes('presignedURL'));
    for (const field of ['linkType', 'relationshipId', 'secondaryId'])
      assert.ok(schemaOf('/v1/asset/{id}/link').items.required.includes(field), field);
    const a = await uploadAsset(
      ctx(),
      org,
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
        .png()
        .toBuffer(),
      'a.png',
    );
    const b = await uploadAsset(
      ctx(),
      org,
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
        .png()
        .toBuffer(),
      'b.png',
    );
    // training/relationships.md's request.
    const link = await ctx().inject({
      method: 'POST',
      url: `/v1/asset/${a.objectId}/link`,
      headers,
      payload: { secondaryIds: [{ id: b.objectId, linkType: 'child' }] },
    });
    assert.equal(link.statusCode, 200, link.body);
    const [rel] = json(await ctx().inject({ method: 'GET', url: `/v1/asset/${a.objectId}/link`, headers }));
    assert.deepEqual(
      [rel.linkType, rel.secondaryId, rel.relationshipId],
      ['child', b.objectId, `${a.objectId}-${b.objectId}`],
    );
    const content = json(await ctx().inject({ method: 'GET', url: `/v1/asset/${a.objectId}/content`, headers }));
    assert.equal(typeof content.presignedURL, 'string');
    // Asset reads and search results never carry them.
    const reads = [
      json(await ctx().inject({ method: 'GET', url: `/v1/asset/${a.objectId}`, headers })),
      json(await ctx().inject({ method: 'GET', url: `/v1/assets/asset/${a.objectId}`, headers })).data,
      ...json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/search/keyword',
          headers,
          payload: { from: 0, limit: 10, searchTerm: ['*'], operation: 'AND' },
        }),
      ).result,
    ];
    for (const read of reads)
      for (const field of ['presignedURL', 'linkType', 'relationshipId', 'secondaryId'])
        assert.equal(read[field], undefined, `${field} in ${JSON.stringify(read).slice(0, 100)}`);
  });

  it("POST /v1/collection/{id}/share answers the reference's {StatusCode, ExecutedVersion, Payload} beside Tessera's fields, with HTTP 202", async () => {
    const a = await uploadAsset(
      ctx(),
      org,
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#123' } })
        .png()
        .toBuffer(),
      'c.png',
    );
    const collection = await ctx().inject({
      method: 'POST',
      url: '/v1/collection',
      headers,
      payload: { collectionType: 'private', name: `Share ${Date.now()}`, collectionDocument: [a.fileId] },
    });
    assert.equal(collection.statusCode, 200, collection.body);
    const id = json(collection).collectionId ?? json(collection).objectId ?? json(collection).id;
    // The reference's CollectionShareRequest example.
    const shared = await ctx().inject({
      method: 'POST',
      url: `/v1/collection/${id}/share`,
      headers,
      payload: {
        sender: { name: 'Jane Smith' },
        shareUsers: [{ email: 'john.doe@example.com', name: 'John Doe' }],
        shareMessage: 'Here are the assets',
      },
    });
    assert.equal(shared.statusCode, 202, shared.body);
    const body = json(shared);
    assert.equal(body.StatusCode, 200);
    assert.equal(body.ExecutedVersion, '$LATEST');
    const payload = JSON.parse(body.Payload);
    assert.equal(payload.statusCode, 200);
    assert.equal(JSON.parse(payload.body).message, body.message);
    assert.equal(body.status, 'success');
    assert.equal(typeof body.actionId, 'string');
  });
});
