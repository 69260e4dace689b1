import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { Value } from 'typebox/value';
import { envelopeSchema, isEventType } from '../../../core/events/index.ts';
import { startWorkers } from '../../../workers.ts';
import { createAsset, defaultTemplate, uploadAsset } from '../../../../test/helpers/assets.ts';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';

// Rights change by every path that writes an asset's metadata, not only a direct edit: each path
// publishes the reference's rm.agreement.* events in the change's transaction (rights.ts,
// publishRightsChange), and none when the rights did not change.

const XMP_USAGE_TERMS = (terms: string) =>
  `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmpRights="http://ns.adobe.com/xap/1.0/rights/"><dc:title><rdf:Alt><rdf:li xml:lang="x-default">Licensed picture</rdf:li></rdf:Alt></dc:title><xmpRights:UsageTerms><rdf:Alt><rdf:li xml:lang="x-default">${terms}</rdf:li></rdf:Alt></xmpRights:UsageTerms></rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;

const withUsageTerms = (terms: string) =>
  sharp({ create: { width: 48, height: 32, channels: 3, background: '#225588' } })
    .withXmp(XMP_USAGE_TERMS(terms))
    .jpeg()
    .toBuffer();

forEachEngine('usage rights: rm.agreement.* from every path that changes them (issue 29)', (ctx) => {
  let org: TestOrg;
  let workers: ReturnType<typeof startWorkers> | undefined;
  before(async () => {
    org = await createTestOrg(ctx());
    workers = startWorkers(ctx().deps);
  });
  after(async () => workers?.stop());

  /** The rm.* events stored for an asset, oldest first, each checked against the catalog's schema. */
  async function rmEvents(assetId: string): Promise<any[]> {
    const rows = await ctx()
      .deps.db.selectFrom('events')
      .select(['type', 'body', 'created_at'])
      .where('org_id', '=', org.orgId)
      .where('type', 'like', 'rm.%')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows
      .map((r) => JSON.parse(r.body))
      .filter((b) => b.asset?.id === assetId)
      .map((b) => {
        assert.ok(isEventType(b.eventType));
        assert.deepEqual([...Value.Errors(envelopeSchema(b.eventType), b)], [], `${b.eventType} matches its schema`);
        return b;
      });
  }

  it('usage terms embedded in the file (XMP xmpRights:UsageTerms) announce the agreement at upload, and a new version with other terms updates it', async () => {
    const created = await uploadAsset(ctx(), org, await withUsageTerms('Editorial use only'), 'licensed.jpg');
    await workers!.drain();
    let events = await rmEvents(created.objectId);
    assert.deepEqual(
      events.map((e) => e.eventType),
      ['rm.agreement.created'],
    );
    assert.equal(events[0].rights.usageTerms, 'Editorial use only');
    assert.equal(events[0].previous, null);

    // A new version whose file says otherwise, uploaded with overwrite: the agreement is updated.
    ctx().clock.advance(1000);
    const v = await uploadAsset(ctx(), org, await withUsageTerms('Web only, no print'), 'licensed-v2.jpg', {
      originalFileId: created.originalFileId,
      overwriteEmbeddedMetadata: true,
    });
    await workers!.drain();
    events = await rmEvents(v.objectId);
    const updated = events.filter((e) => e.eventType === 'rm.agreement.updated');
    assert.equal(updated.length, 1, JSON.stringify(events.map((e) => e.eventType)));
    assert.equal(updated[0].rights.usageTerms, 'Web only, no print');
    assert.equal(updated[0].previous.usageTerms, 'Editorial use only');

    // The same file again: the rights do not change, so no event.
    const before = (await rmEvents(v.objectId)).length;
    const same = await uploadAsset(ctx(), org, await withUsageTerms('Editorial use only'), 'again.jpg');
    await workers!.drain();
    assert.equal((await rmEvents(same.objectId)).length, 1, 'a new asset: created once');
    assert.equal((await rmEvents(v.objectId)).length, before);
  });

  it('a bulk edit Action that sets rights publishes one rm.agreement event per asset whose rights changed, none for the others', async () => {
    const template = await defaultTemplate(ctx(), org);
    const a = (await createAsset(ctx(), org)).objectId;
    const b = (await createAsset(ctx(), org)).objectId;
    const patch = await ctx().inject({
      method: 'PATCH',
      url: '/v1/assets/asset/' + b,
      headers: org.admin.headers,
      payload: { metadata: [{ name: 'Usage Terms', value: 'Print only' }] },
    });
    assert.ok(patch.statusCode < 300, patch.body);
    assert.equal((await rmEvents(b)).length, 1);

    const started = await ctx().inject({
      method: 'PATCH',
      url: '/v1/asset',
      headers: org.admin.headers,
      payload: {
        metadataTemplateId: template.id,
        objectIds: [a, b],
        metadataDocument: [
          {
            metadataDefinitionId: template.attr('usage_terms'),
            metadataDefinitionValue: 'Print only',
            operation: 'replace',
          },
        ],
      },
    });
    assert.equal(started.statusCode, 200, started.body);
    await workers!.drain();
    const action = json(
      await ctx().inject({ method: 'GET', url: `/v1/action/${json(started).jobId}`, headers: org.admin.headers }),
    );
    assert.equal(action.status, 'succeeded', JSON.stringify(action));
    const ofA = await rmEvents(a);
    assert.deepEqual(
      ofA.map((e) => e.eventType),
      ['rm.agreement.created'],
    );
    assert.equal(ofA[0].rights.usageTerms, 'Print only');
    assert.equal(ofA[0].event.user.id, org.admin.userId, 'the Action runs as the person who started it');
    assert.equal((await rmEvents(b)).length, 1, 'b already had these terms: no event');
  });

  it('POST /v1/metadata/apply: a renamed license value reaches the asset as rm.agreement.updated, with the Action creator as actor', async () => {
    const template = await defaultTemplate(ctx(), org);
    const created = await ctx().inject({
      method: 'POST',
      url: '/v1/assets/asset',
      headers: org.admin.headers,
      payload: {
        metadataTemplateId: template.id,
        securityTemplateIds: [org.defaultTemplateId],
        metadata: [{ name: 'Usage Rights', value: 'Rights Managed' }],
      },
    });
    assert.equal(created.statusCode, 200, created.body);
    const id = (json(created).data?.objectId ?? json(created).objectId) as string;
    assert.deepEqual(
      (await rmEvents(id)).map((e) => e.eventType),
      ['rm.agreement.created'],
    );
    const other = (await createAsset(ctx(), org)).objectId;

    // The license is a vocabulary value: rename it.
    const vocabularies = json(
      await ctx().inject({ method: 'GET', url: '/v1/metadata/vocabulary', headers: org.admin.headers }),
    );
    const list: any[] = vocabularies.results ?? vocabularies.data ?? vocabularies;
    const usage = list.find((v: any) => (v.name ?? v.metadataDefinitionName) === 'Usage Rights');
    assert.ok(usage, JSON.stringify(vocabularies).slice(0, 500));
    const vocabId = usage.metadataDefinitionId ?? usage.id;
    const full = json(
      await ctx().inject({ method: 'GET', url: `/v1/metadata/vocabulary/${vocabId}`, headers: org.admin.headers }),
    );
    const values: any[] = full.metadataDocument.values;
    const rm = values.find((v: any) => v.valueName === 'Rights Managed');
    assert.ok(rm, JSON.stringify(full).slice(0, 500));
    ctx().clock.advance(1000);
    const renamed = await ctx().inject({
      method: 'PATCH',
      url: `/v1/metadata/vocabulary/${vocabId}`,
      headers: org.admin.headers,
      payload: { update: [{ valueId: rm.valueId, valueName: 'Rights-managed licence' }] },
    });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal((await rmEvents(id)).length, 1, 'nothing until the change is applied');

    ctx().clock.advance(1000);
    const started = await ctx().inject({
      method: 'POST',
      url: '/v1/metadata/apply',
      headers: org.admin.headers,
      payload: {},
    });
    assert.equal(started.statusCode, 202, started.body);
    await workers!.drain();
    const events = await rmEvents(id);
    assert.deepEqual(
      events.map((e) => e.eventType),
      ['rm.agreement.created', 'rm.agreement.updated'],
    );
    assert.equal(events[1].rights.license, 'Rights-managed licence');
    assert.equal(events[1].previous.license, 'Rights Managed');
    assert.equal(events[1].agreement.name, 'Rights-managed licence');
    assert.equal(events[1].event.user.id, org.admin.userId);
    assert.deepEqual(await rmEvents(other), [], 'an asset without rights: nothing');

    // Applying again changes nothing and announces nothing.
    ctx().clock.advance(1000);
    await ctx().inject({ method: 'POST', url: '/v1/metadata/apply', headers: org.admin.headers, payload: {} });
    await workers!.drain();
    assert.equal((await rmEvents(id)).length, 2);
  });
});
