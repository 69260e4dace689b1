import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Value } from 'typebox/value';
import { envelopeSchema, isEventType } from '../src/core/events/index.ts';
import type { Worker } from '../src/core/jobs/worker.ts';
import { runDeliveryOnce } from '../src/features/webhooks/index.ts';
import { assetWorker, jpeg, pathOf, uploadAsset } from './helpers/assets.ts';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg, type TestOrg } from './helpers/factories.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';

/** Issue 24, item 4: the asset events as the reference's published payloads show them, received by a real HTTP receiver. */
forEachEngine('compatibility: webhook payloads (issue 24)', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  let rx: Receiver;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
    rx = await startReceiver();
    // The reference's createSubscription example, with the three event types of this test.
    const created = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [
        {
          description: 'Notify System X for asset events',
          eventTypes: ['asset.shared', 'asset.renditions.created', 'asset.downloaded'],
          url: rx.url,
          rateLimit: 200,
        },
      ],
    });
    assert.equal(created.statusCode, 200, created.body);
  });
  after(async () => {
    await worker.stop();
    await rx.close();
  });

  /** What the receiver got of one type since `from`, each checked against the catalog's schema. */
  async function delivered(type: string, from = 0): Promise<any[]> {
    await runDeliveryOnce(ctx().deps);
    return rx.received
      .slice(from)
      .map((r) => JSON.parse(r.body))
      .filter((b) => b.eventType === type)
      .map((b) => {
        assert.ok(isEventType(b.eventType));
        assert.deepEqual([...Value.Errors(envelopeSchema(b.eventType), b)], [], `${b.eventType} matches its schema`);
        return b;
      });
  }

  it('asset.renditions.created carries renditions{thumbnail, preview, fpo, large, mezzanine} (asset.renditions, as the live page, and at the top level, as the repository schema)', async () => {
    const a = await uploadAsset(ctx(), org, await jpeg(1200, 800), 'photo.jpg');
    await worker.drain();
    const [event] = (await delivered('asset.renditions.created')).filter((b) => b.asset.id === a.objectId);
    assert.ok(event, 'asset.renditions.created delivered');
    for (const renditions of [event.asset.renditions, event.renditions]) {
      assert.deepEqual(Object.keys(renditions).sort(), ['fpo', 'large', 'mezzanine', 'preview', 'thumbnail']);
      for (const url of Object.values(renditions) as string[]) {
        const res = await ctx().inject({ method: 'GET', url: pathOf(url), headers: org.admin.headers });
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      }
    }
    assert.equal(event.asset.filename, 'photo.jpg');
    assert.deepEqual(
      event.asset.securityTemplates.map((t: { id: string }) => t.id),
      [org.defaultTemplateId],
    );
  });

  it("asset.shared carries share{type, recipients} (and the shared assets) for the reference's share request", async () => {
    const a = await uploadAsset(ctx(), org, await jpeg(20, 20), 'shared.jpg');
    const from = rx.received.length;
    // reference §7.15: {sender: {name}, shareUsers: [{email, name}], assets: [objectId], shareMessage}
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/share',
      headers: org.admin.headers,
      payload: {
        sender: { name: 'Erlich Bachman' },
        shareUsers: [
          { email: 'richard@piedpiper.test', name: 'Richard' },
          { email: 'jared@piedpiper.test', name: 'Jared' },
        ],
        assets: [a.objectId],
        shareMessage: 'Check these out',
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const [event] = await delivered('asset.shared', from);
    assert.ok(event, 'asset.shared delivered');
    assert.equal(event.share.type, 'External');
    assert.deepEqual(event.share.recipients, ['richard@piedpiper.test', 'jared@piedpiper.test']);
    assert.deepEqual(event.share.assets, [{ id: a.objectId, filename: 'shared.jpg' }]);
    assert.equal(event.event.user.id, org.admin.userId);
    // Handing out the links is no download.
    assert.deepEqual(await delivered('asset.downloaded', from), []);
  });

  it('asset.downloaded fires when the bytes are served (top-level asset{id}), not when a link is requested', async () => {
    const bytes = await jpeg(64, 64);
    const a = await uploadAsset(ctx(), org, bytes, 'dl.jpg');
    let from = rx.received.length;
    const link = await ctx().inject({
      method: 'GET',
      url: `/v1/asset/${a.objectId}/content`,
      headers: org.admin.headers,
    });
    assert.equal(link.statusCode, 200, link.body);
    const exposed = await ctx().inject({
      method: 'POST',
      url: '/v1/asset/expose',
      headers: org.admin.headers,
      payload: [
        {
          id: a.objectId,
          identifier: 'objectId',
          components: [{ componentType: 'object', componentRef: 'original', expiration: 600 }],
        },
      ],
    });
    assert.equal(exposed.statusCode, 200, exposed.body);
    assert.deepEqual(await delivered('asset.downloaded', from), [], 'no event for handing out links');
    // A HEAD, a conditional request answered 304 and a later range of a resumed download are no new download.
    const url = pathOf(json(link).presignedURL);
    assert.equal((await ctx().inject({ method: 'HEAD', url })).statusCode, 200);
    const full = await ctx().inject({ method: 'GET', url });
    assert.equal(full.statusCode, 200);
    assert.ok(full.rawPayload.equals(bytes));
    assert.equal(
      (await ctx().inject({ method: 'GET', url, headers: { 'if-none-match': String(full.headers.etag) } })).statusCode,
      304,
    );
    assert.equal((await ctx().inject({ method: 'GET', url, headers: { range: 'bytes=10-' } })).statusCode, 206);
    let events = await delivered('asset.downloaded', from);
    assert.equal(events.length, 1, 'one download');
    assert.deepEqual(events[0].asset, { id: a.objectId, filename: 'dl.jpg' });
    assert.deepEqual(events[0].assets, [{ id: a.objectId, filename: 'dl.jpg' }]);
    assert.equal(events[0].event.user.id, org.admin.userId, 'the user the link was made for');
    // The exposed URL, read from its first byte in ranges, is a second download.
    from = rx.received.length;
    const first = await ctx().inject({
      method: 'GET',
      url: pathOf(json(exposed)[0].components[0].url),
      headers: { range: 'bytes=0-9' },
    });
    assert.equal(first.statusCode, 206);
    events = await delivered('asset.downloaded', from);
    assert.equal(events.length, 1);
    assert.equal(events[0].asset.id, a.objectId);
    // The actor named in the link is signed: changing it breaks the link.
    const forged = url.replace(/by=[^&]+/, 'by=00000000-0000-4000-8000-000000000000');
    assert.notEqual(forged, url);
    assert.equal((await ctx().inject({ method: 'GET', url: forged })).statusCode, 403);
  });
});
