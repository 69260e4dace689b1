import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Value } from 'typebox/value';
import { envelopeSchema, isEventType } from '../../../core/events/index.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { runDeliveryOnce } from '../../webhooks/index.ts';
import { assetWorker, defaultTemplate } from '../../../../test/helpers/assets.ts';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { startReceiver, type Receiver } from '../../../../test/helpers/receiver.ts';
import { sweepExpiredRights } from './rights.ts';
import { seedMissingOrganizations } from '../../metadata/index.ts';

const DAY = 86_400_000;
/** MM/dd/yyyy, the system date attributes' format, of an epoch day. */
const us = (ms: number) => {
  const d = new Date(ms);
  return `${String(d.getUTCMonth() + 1).padStart(2, '0')}/${String(d.getUTCDate()).padStart(2, '0')}/${d.getUTCFullYear()}`;
};
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

forEachEngine('usage rights (issue 29, part 4)', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  let rx: Receiver;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
    rx = await startReceiver();
    const created = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [{ description: 'rights', eventTypes: ['rm.*'], url: rx.url }],
    });
    assert.equal(created.statusCode, 200, created.body);
  });
  after(async () => {
    await worker.stop();
    await rx.close();
  });

  /** rm.* bodies the receiver got since `from`, each checked against the catalog's schema. */
  async function delivered(from: number): Promise<any[]> {
    await runDeliveryOnce(ctx().deps);
    return rx.received
      .slice(from)
      .map((r) => JSON.parse(r.body))
      .map((b) => {
        assert.ok(isEventType(b.eventType));
        assert.deepEqual([...Value.Errors(envelopeSchema(b.eventType), b)], [], `${b.eventType} matches its schema`);
        return b;
      });
  }

  async function create(metadata: { name: string; value: unknown }[], filename = 'metadata-only') {
    const { id } = await defaultTemplate(ctx(), org);
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/assets/asset',
      headers: org.admin.headers,
      payload: { metadataTemplateId: id, securityTemplateIds: [org.defaultTemplateId], metadata },
    });
    assert.equal(res.statusCode, 200, res.body);
    void filename;
    return (json(res).data?.objectId ?? json(res).objectId) as string;
  }

  async function patch(id: string, metadata: { name: string; value: unknown }[]) {
    const res = await ctx().inject({
      method: 'PATCH',
      url: `/v1/assets/asset/${id}`,
      headers: org.admin.headers,
      payload: { metadata },
    });
    assert.ok(res.statusCode < 300, res.body);
  }

  it('rights are system attributes of every template: license, usage terms, territories, channels, start and expiry dates', async () => {
    const { attr } = await defaultTemplate(ctx(), org);
    for (const field of [
      'usage_rights',
      'usage_terms',
      'rights_territories',
      'rights_channels',
      'rights_start_date',
      'expiration_date',
    ])
      assert.ok(attr(field), field);
  });

  it('organizations seeded before the rights fields are given them at start, after their own attributes', async () => {
    const old = await createTestOrg(ctx());
    const db = ctx().deps.db;
    const rights = await db
      .selectFrom('metadata_attributes')
      .select('id')
      .where('org_id', '=', old.orgId)
      .where('search_field', 'in', ['usage_terms', 'rights_territories', 'rights_channels', 'rights_start_date'])
      .execute();
    assert.equal(rights.length, 4);
    const ids = rights.map((r) => r.id);
    await db.deleteFrom('metadata_group_attributes').where('attribute_id', 'in', ids).execute();
    await db.deleteFrom('metadata_attributes').where('id', 'in', ids).execute();
    await seedMissingOrganizations(db, ctx().clock.now(), [old.orgId]);
    const back = await db
      .selectFrom('metadata_group_attributes as g')
      .innerJoin('metadata_attributes as a', 'a.id', 'g.attribute_id')
      .select(['a.search_field', 'g.position'])
      .where('g.org_id', '=', old.orgId)
      .orderBy('g.position')
      .execute();
    assert.deepEqual(
      back.slice(-4).map((r) => r.search_field),
      ['usage_terms', 'rights_territories', 'rights_channels', 'rights_start_date'],
    );
    // Run again: nothing is added twice.
    await seedMissingOrganizations(db, ctx().clock.now(), [old.orgId]);
    const count = await db
      .selectFrom('metadata_attributes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', old.orgId)
      .where('search_field', '=', 'rights_territories')
      .executeTakeFirst();
    assert.equal(Number(count?.n), 1);
  });

  it('setting, changing and clearing rights publish rm.agreement.created / updated / deleted, delivered to a real receiver', async () => {
    const from = rx.received.length;
    const now = ctx().clock.now();
    const id = await create([
      { name: 'Usage Rights', value: 'Rights Managed' },
      { name: 'Usage Terms', value: 'Print and web, no broadcast' },
      { name: 'Rights Territories', value: ['Europe', 'North America'] },
      { name: 'Rights Channels', value: ['Web'] },
      { name: 'Rights Start Date', value: us(now - 10 * DAY) },
      { name: 'Expiration Date', value: us(now + 30 * DAY) },
    ]);
    await patch(id, [{ name: 'Rights Channels', value: ['Web', 'Print'] }]);
    // Metadata other than rights: no rm event.
    await patch(id, [{ name: 'Title', value: 'Not a right' }]);
    await patch(id, [
      { name: 'Usage Rights', value: null },
      { name: 'Usage Terms', value: null },
      { name: 'Rights Territories', value: null },
      { name: 'Rights Channels', value: null },
      { name: 'Rights Start Date', value: null },
      { name: 'Expiration Date', value: null },
    ]);
    const events = (await delivered(from)).filter((e) => e.agreement?.id === id);
    // Delivered concurrently, so in any order: one of each.
    assert.deepEqual(events.map((e) => e.eventType).sort(), [
      'rm.agreement.created',
      'rm.agreement.deleted',
      'rm.agreement.updated',
    ]);
    const of = (type: string) => events.find((e) => e.eventType === type);
    const [created, updated, deleted] = [
      of('rm.agreement.created'),
      of('rm.agreement.updated'),
      of('rm.agreement.deleted'),
    ];
    assert.equal(created.agreement.name, 'Rights Managed');
    assert.deepEqual(created.rights, {
      license: 'Rights Managed',
      usageTerms: 'Print and web, no broadcast',
      territories: ['Europe', 'North America'],
      channels: ['Web'],
      startDate: iso(now - 10 * DAY),
      expiryDate: iso(now + 30 * DAY),
    });
    assert.equal(created.previous, null);
    assert.deepEqual(updated.rights.channels, ['Web', 'Print']);
    assert.deepEqual(updated.previous.channels, ['Web']);
    assert.equal(deleted.rights, null);
    assert.equal(deleted.event.user.id, org.admin.userId);
  });

  it('an expired right is announced once (rm.agreement.expired), however often and wherever the sweep runs', async () => {
    const now = ctx().clock.now();
    const id = await create([
      { name: 'Usage Rights', value: 'Editorial Use Only' },
      { name: 'Expiration Date', value: us(now + 2 * DAY) },
    ]);
    const from = rx.received.length;
    assert.equal(await sweepExpiredRights(ctx().deps), 0, 'not expired yet');
    ctx().clock.advance(3 * DAY);
    const second = await ctx().secondInstance();
    // Two instances' sweeps at once, then again: one announcement. (On SQLite the two instances share
    // this process, where one's wait for the write lock would block the other's commit: one after the other.)
    const counts =
      ctx().engine === 'postgres'
        ? await Promise.all([sweepExpiredRights(ctx().deps), sweepExpiredRights(second.deps)])
        : [await sweepExpiredRights(second.deps), await sweepExpiredRights(ctx().deps)];
    assert.equal(counts[0]! + counts[1]!, 1);
    assert.equal(await sweepExpiredRights(ctx().deps), 0);
    // The job the workers run does the same.
    const expired = (await delivered(from)).filter((e) => e.eventType === 'rm.agreement.expired');
    assert.deepEqual(
      expired.map((e) => e.agreement),
      [{ id, name: 'Editorial Use Only' }],
    );
    assert.equal(expired[0].rights.expiryDate, iso(now + 2 * DAY));
    // A right extended and expiring again is announced again.
    await patch(id, [{ name: 'Expiration Date', value: us(ctx().clock.now() + DAY) }]);
    ctx().clock.advance(2 * DAY);
    assert.equal(await sweepExpiredRights(ctx().deps), 1);
  });

  it('expiring and expired assets are found by search: date ranges on the expiry, facets on territories and channels', async () => {
    const now = ctx().clock.now();
    const soon = await create([
      { name: 'Title', value: 'zqxrights soon' },
      { name: 'Rights Territories', value: ['Oceania'] },
      { name: 'Expiration Date', value: us(now + 5 * DAY) },
    ]);
    const later = await create([
      { name: 'Title', value: 'zqxrights later' },
      { name: 'Rights Territories', value: ['Oceania'] },
      { name: 'Expiration Date', value: us(now + 90 * DAY) },
    ]);
    const search = async (body: Record<string, unknown>) => {
      const res = await ctx().inject({
        method: 'POST',
        url: '/v1/search/keyword',
        headers: org.admin.headers,
        payload: { searchTerm: 'zqxrights', ...body },
      });
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const within30 = await search({ dateRanges: [{ field: 'expiration_date', from: now, to: now + 30 * DAY }] });
    assert.deepEqual(
      within30.result.map((r: { objectId: string }) => r.objectId),
      [soon],
    );
    const all = await search({ facets: ['Rights Territories'] });
    assert.deepEqual(all.result.map((r: { objectId: string }) => r.objectId).sort(), [soon, later].sort());
    const territories = all.facets.find((f: { facet_name: string }) => f.facet_name === 'Rights Territories');
    assert.deepEqual(territories?.values, [{ key: 'Oceania', doc_count: 2 }]);
  });
});
