import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine, json, type TestContext } from './helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from './helpers/factories.ts';
import { login } from './helpers/auth.ts';
import { assetWorker, createAsset, pathOf, uploadAsset } from './helpers/assets.ts';
import { startSmtp } from './helpers/smtp.ts';
import type { Worker } from '../src/core/jobs/worker.ts';

const smtp = await startSmtp();
after(() => smtp.close());

/** A 400x300 picture: left half red, right half blue (so crops and flips can be told apart). */
async function picture(): Promise<Buffer> {
  const half = (r: number, b: number) =>
    sharp({ create: { width: 200, height: 300, channels: 3, background: { r, g: 0, b } } })
      .png()
      .toBuffer();
  return sharp({ create: { width: 400, height: 300, channels: 3, background: '#000000' } })
    .composite([
      { input: await half(255, 0), left: 0, top: 0 },
      { input: await half(0, 255), left: 200, top: 0 },
    ])
    .jpeg({ quality: 95 })
    .toBuffer();
}

async function pixel(bytes: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [data[at]!, data[at + 1]!, data[at + 2]!];
}

/** The links of a mail (quoted-printable undone). */
function linksIn(body: string): string[] {
  const text = body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return [
    ...new Set([...text.matchAll(/https?:\/\/[^\s"<>]+\/v1\/(?:transform|content)\/[^\s"<>]+/g)].map((m) => m[0])),
  ];
}

/** Issue 24, item 9: POST /v1/asset/transform (operationId GetTransformation), reference §7.16. */
forEachEngine(
  'compatibility: transformations (issue 24, item 9)',
  (ctx) => {
    let org: TestOrg;
    let worker: Worker;
    let headers: Record<string, string>;
    let photo: { objectId: string; fileId: string };
    const post = (payload: unknown, h = headers) =>
      ctx().inject({
        method: 'POST',
        url: '/v1/asset/transform/',
        headers: h,
        payload: payload as Record<string, unknown>,
      });
    const runAction = async (c: TestContext, jobId: string) => {
      await worker.drain();
      return json(await c.inject({ method: 'GET', url: `/v1/action/${jobId}`, headers }));
    };

    before(async () => {
      org = await createTestOrg(ctx());
      worker = assetWorker(ctx());
      const session = await login(ctx(), org.admin);
      // The reference's headers: gateway key, the restricted service's verification key, AccessToken and Authorization together.
      headers = {
        'x-api-key': 'customer-gateway-key',
        'x-api-verification-key': 'customer-verification-key',
        accesstoken: session.session.accessToken,
        authorization: session.session.authorization,
        'content-type': 'application/json',
      };
      photo = await uploadAsset(ctx(), org, await picture(), 'harbour.jpg');
      await worker.drain();
    });
    after(() => worker.stop());

    it("the reference's own example request (its proprietary digimarc kind) is a 400 naming the field and the kind", async () => {
      const res = await post({
        transformations: [
          {
            objectId: photo.objectId,
            expiration: 3600,
            source: 'imagePreview',
            includeOriginal: true,
            transformations: 'digimarc',
          },
        ],
        recipients: 'john.doe@example.com',
        shareMessage: 'Watermarked files',
      });
      assert.equal(res.statusCode, 400, res.body);
      const body = json(res);
      assert.equal(body.details[0].field, 'body.transformations.0.transformations');
      assert.match(body.message, /digimarc/);
      assert.match(body.message, /resize, crop, rotate, flip, format, quality, watermark/);
      const doc = json(await ctx().inject({ method: 'GET', url: '/openapi.json' }));
      assert.equal(doc.paths['/v1/asset/transform'].post.operationId, 'GetTransformation');
    });

    it("crops, resizes, rotates, changes format and quality into a file behind an expiring link, mailed through the outbox with the original's link", async () => {
      smtp.mails.length = 0;
      const res = await post({
        transformations: [
          {
            objectId: photo.objectId,
            expiration: 3600,
            source: 'original',
            includeOriginal: true,
            transformations: [
              { type: 'crop', left: 0, top: 0, width: 200, height: 300 },
              { type: 'rotate', angle: 90 },
              { type: 'resize', width: 150 },
              { type: 'format', format: 'webp' },
              { type: 'quality', quality: 70 },
            ],
          },
        ],
        recipients: 'john.doe@example.com; jane@example.com',
        shareMessage: 'The web versions',
      });
      assert.equal(res.statusCode, 202, res.body);
      const started = json(res);
      assert.equal(started.status, 'success');
      assert.equal(started.mail, 'queued');
      const action = await runAction(ctx(), started.jobId);
      assert.equal(action.status, 'succeeded', JSON.stringify(action));
      assert.equal(action.type, 'assets.transform');
      const [file] = action.result.files;
      assert.deepEqual(
        [file.width, file.height, file.contentType, file.filename],
        [150, 100, 'image/webp', 'harbour-transformed.webp'],
      );
      const got = await ctx().inject({ method: 'GET', url: pathOf(file.url) });
      assert.equal(got.statusCode, 200);
      assert.equal(got.headers['content-type'], 'image/webp');
      const meta = await sharp(got.rawPayload).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 150, 100]);
      const [r, , b] = await pixel(got.rawPayload, 75, 50);
      assert.ok(r > 200 && b < 60, 'the left (red) half, turned');
      const original = await ctx().inject({ method: 'GET', url: pathOf(file.originalUrl) });
      assert.equal(original.statusCode, 200);
      assert.deepEqual(original.rawPayload, await picture());
      // Both recipients get the links, delivered by the workers from the outbox.
      await worker.drain();
      assert.deepEqual(smtp.mails.map((m) => m.to).sort(), ['jane@example.com', 'john.doe@example.com']);
      // A transformation mails links to files made from the asset; it shares no asset: no asset.shared event.
      const events = await ctx().deps.db.selectFrom('events').select('type').where('org_id', '=', org.orgId).execute();
      assert.ok(events.length > 0, 'the organization has events (the upload)');
      assert.ok(!events.some((e) => e.type === 'asset.shared'), JSON.stringify(events.map((e) => e.type)));
      const links = linksIn(smtp.mails[0]!.body);
      assert.ok(links.includes(file.url) && links.includes(file.originalUrl), JSON.stringify(links));
      // The link expires, and a tampered one is refused.
      assert.equal(
        (await ctx().inject({ method: 'GET', url: pathOf(file.url).replace(/signature=[^&]+/, 'signature=x') }))
          .statusCode,
        403,
      );
      ctx().clock.advance(3601 * 1000);
      assert.equal((await ctx().inject({ method: 'GET', url: pathOf(file.url) })).statusCode, 403);
      const session = await login(ctx(), org.admin);
      headers = { ...headers, accesstoken: session.session.accessToken, authorization: session.session.authorization };
    });

    it('watermarks with text and with an image asset, from a rendition; flips; without recipients the links are in the action result', async () => {
      const markBytes = await sharp({
        create: { width: 100, height: 100, channels: 4, background: { r: 0, g: 255, b: 0, alpha: 1 } },
      })
        .png()
        .toBuffer();
      const mark = await uploadAsset(ctx(), org, markBytes, 'logo.png');
      await worker.drain();
      const res = await post({
        transformations: [
          {
            objectId: photo.objectId,
            transformations: [
              { type: 'watermark', objectId: mark.objectId, gravity: 'northwest', opacity: 1, scale: 0.25 },
              { type: 'format', format: 'png' },
            ],
          },
          {
            objectId: photo.fileId,
            source: 'imagePreview',
            transformations: [
              { type: 'flip', direction: 'horizontal' },
              { type: 'watermark', text: '© Tessera', gravity: 'center', opacity: 1, scale: 0.8 },
            ],
          },
        ],
      });
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(json(res).mail, 'none');
      const action = await runAction(ctx(), json(res).jobId);
      assert.equal(action.status, 'succeeded', JSON.stringify(action));
      const [marked, flipped] = action.result.files;
      const one = (await ctx().inject({ method: 'GET', url: pathOf(marked.url) })).rawPayload;
      assert.deepEqual((await sharp(one).metadata()).format, 'png');
      const [r, g] = await pixel(one, 10, 10);
      assert.ok(g > 200 && r < 60, 'the green logo in the top-left corner');
      const [r2, , b2] = await pixel(one, 390, 290);
      assert.ok(r2 < 60 && b2 > 200, 'the blue right half untouched');
      const two = (await ctx().inject({ method: 'GET', url: pathOf(flipped.url) })).rawPayload;
      assert.equal(flipped.contentType, 'image/jpeg', "the rendition's format kept");
      const info = await sharp(two).metadata();
      const [fr, , fb] = await pixel(two, 5, 5);
      assert.ok(fb > 200 && fr < 60, 'flipped: blue on the left');
      const centre = await pixel(two, Math.round(info.width! / 2), Math.round(info.height! / 2));
      const plain = await pixel(
        (
          await ctx().inject({
            method: 'GET',
            url: pathOf(
              json(await ctx().inject({ method: 'GET', url: `/v1/asset/${photo.objectId}`, headers })).renditions
                .imagePreview,
            ),
            headers,
          })
        ).rawPayload,
        Math.round(info.width! / 2),
        Math.round(info.height! / 2),
      );
      assert.notDeepEqual(centre, plain, 'text drawn over the middle');
      // The link dies with its asset.
      await ctx().inject({
        method: 'POST',
        url: `/v1/asset/${mark.objectId}/delete`,
        headers,
        payload: { action: 'delete' },
      });
      await ctx().inject({
        method: 'POST',
        url: `/v1/asset/${photo.objectId}/delete`,
        headers,
        payload: { action: 'delete' },
      });
      assert.equal((await ctx().inject({ method: 'GET', url: pathOf(marked.url) })).statusCode, 410);
      await ctx().inject({
        method: 'POST',
        url: `/v1/asset/${photo.objectId}/delete`,
        headers,
        payload: { action: 'undelete' },
      });
    });

    it("refuses bad input with a 400 naming the field: unknown kinds, bad parameters, a crop outside the picture, a missing source, other organizations' assets, bad addresses", async () => {
      const item = (over: Record<string, unknown>) => ({
        transformations: [{ objectId: photo.objectId, transformations: [{ type: 'resize', width: 10 }], ...over }],
      });
      const other = await createTestOrg(ctx());
      const foreign = await uploadAsset(ctx(), other, await picture(), 'x.jpg');
      const metadataOnly = await createAsset(ctx(), org, {});
      const cases: [unknown, string, RegExp?][] = [
        [{}, 'body.transformations'],
        [{ transformations: [] }, 'body.transformations'],
        [item({ transformations: [{ type: 'sepia' }] }), 'body.transformations.0.transformations.0.type', /sepia/],
        [
          item({ transformations: [{ type: 'digimarc' }] }),
          'body.transformations.0.transformations.0.type',
          /digimarc/,
        ],
        // `type` is required by the declared schema: the validator names the list.
        [item({ transformations: [{ width: 3 }] }), 'body.transformations.0.transformations'],
        [item({ transformations: [{ type: 'resize' }] }), 'body.transformations.0.transformations.0.width'],
        [item({ transformations: [{ type: 'resize', width: 0 }] }), 'body.transformations.0.transformations.0.width'],
        [
          item({ transformations: [{ type: 'crop', left: 300, top: 0, width: 200, height: 100 }] }),
          'body.transformations.0.transformations.0',
          /outside the 400x300 image/,
        ],
        [
          item({
            transformations: [
              { type: 'rotate', angle: 90 },
              { type: 'crop', width: 301, height: 10 },
            ],
          }),
          'body.transformations.0.transformations.1',
          /outside the 300x400 image/,
        ],
        [
          item({ transformations: [{ type: 'format', format: 'bmp' }] }),
          'body.transformations.0.transformations.0.format',
        ],
        [
          item({ transformations: [{ type: 'quality', quality: 101 }] }),
          'body.transformations.0.transformations.0.quality',
        ],
        [item({ transformations: [{ type: 'watermark' }] }), 'body.transformations.0.transformations.0.text'],
        [
          item({ transformations: [{ type: 'watermark', text: 'a', opacity: 2 }] }),
          'body.transformations.0.transformations.0.opacity',
        ],
        [
          item({ transformations: [{ type: 'watermark', objectId: foreign.objectId }] }),
          'body.transformations.0.transformations.0.objectId',
        ],
        [item({ source: 'imageHuge' }), 'body.transformations.0.source', /imageHuge/],
        [item({ expiration: 10 }), 'body.transformations.0.expiration'],
        [item({ objectId: foreign.objectId }), 'body.transformations.0.objectId'],
        [item({ objectId: metadataOnly.objectId }), 'body.transformations.0.objectId'],
        [{ ...item({}), recipients: 'john.doe@example.com, not-an-address' }, 'body.recipients', /not-an-address/],
        [{ ...item({}), recipients: ['ok@example.com', 'nope'] }, 'body.recipients.1'],
      ];
      for (const [payload, field, message] of cases) {
        const res = await post(payload);
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
        const body = json(res);
        assert.ok(
          body.details?.some((d: { field: string }) => d.field === field),
          `${JSON.stringify(payload)}: ${field} named in ${res.body}`,
        );
        if (message) assert.match(body.message + JSON.stringify(body.details), message);
      }
      // Visible without Share: 403; no credentials: 401.
      const viewer = await createTestUser(ctx(), org, { privileges: ['download'] });
      const refused = await post(item({}), viewer.headers);
      assert.ok([403, 400].includes(refused.statusCode), refused.body);
      assert.equal(
        (await ctx().inject({ method: 'POST', url: '/v1/asset/transform', payload: item({}) })).statusCode,
        401,
      );
    });
  },
  { env: { TESSERA_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` } },
);
