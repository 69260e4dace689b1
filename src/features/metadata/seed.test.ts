import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine } from '../../../test/helpers/context.ts';
import { headersFor } from '../../../test/helpers/credentials.ts';
import { bootstrapFirstOrganization } from '../identity/index.ts';
import { organizationIds } from '../identity/index.ts';
import {
  defaultTemplateId,
  loadTemplate,
  seedMissingOrganizations,
  seedOrganizationMetadata,
  validateMetadata,
} from './index.ts';

forEachEngine('metadata: a usable start', (ctx) => {
  it('the first organization (npm start) gets the system group, a Default metadata template and a Default security template', async () => {
    const boot = await bootstrapFirstOrganization(ctx().deps, seedOrganizationMetadata);
    assert.ok(boot.created);
    if (!boot.created) return;
    const db = ctx().deps.db;
    const templateId = await defaultTemplateId(db, boot.orgId);
    assert.ok(templateId);
    const t = (await loadTemplate(db, boot.orgId, templateId))!;
    assert.deepEqual(t.attributes.map((a) => a.searchField).slice(0, 4), [
      'title',
      'description',
      'keywords',
      'copyright',
    ]);
    // An asset can be described at once, in either encoding, with nothing configured.
    const r = validateMetadata(
      t,
      [
        { name: 'Title', value: 'First asset' },
        { name: 'Usage Rights', value: 'Royalty Free' },
        { name: 'Expiration Date', value: '12/31/2030' },
      ],
      { mode: 'create', applyDefaults: true },
    );
    assert.deepEqual(r.problems, []);
    const security = await db
      .selectFrom('security_templates')
      .select(['id', 'name'])
      .where('org_id', '=', boot.orgId)
      .execute();
    assert.deepEqual(
      security.map((s) => s.name),
      ['Default'],
    );
    // And through the API: the first administrator creates an asset on the fresh install, nothing configured.
    const admin = (
      await db
        .selectFrom('users')
        .select('id')
        .where('org_id', '=', boot.orgId)
        .where('username', '=', boot.username)
        .executeTakeFirstOrThrow()
    ).id;
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/assets/asset',
      headers: headersFor(admin),
      payload: {
        metadataTemplateId: templateId,
        securityTemplateIds: [security[0]!.id],
        metadata: [
          { name: 'Title', value: 'First asset' },
          { name: 'Usage Rights', value: 'Royalty Free' },
        ],
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const objectId = res.json().data?.objectId ?? res.json().objectId;
    const stored = await ctx().inject({ method: 'GET', url: `/v1/asset/${objectId}`, headers: headersFor(admin) });
    assert.equal(stored.statusCode, 200, stored.body);
    assert.equal(stored.json().metadataDenormalized.title, 'First asset');
    assert.equal(stored.json().metadataDenormalized.usage_rights, 'Royalty Free');
  });

  it('organizations made before metadata existed are seeded once at start', async () => {
    const db = ctx().deps.db;
    const now = ctx().clock.now();
    const orgId = '00000000-0000-4000-8000-0000000000aa';
    await db
      .insertInto('organizations')
      .values({ id: orgId, name: 'Legacy', customer_id: '1999999999999', created_at: now })
      .execute();
    assert.equal(await defaultTemplateId(db, orgId), undefined);
    assert.equal(
      await db.transaction().execute(async (trx) => seedMissingOrganizations(trx, now, await organizationIds(trx))),
      1,
    );
    assert.ok(await defaultTemplateId(db, orgId));
    assert.equal(
      await db.transaction().execute(async (trx) => seedMissingOrganizations(trx, now, await organizationIds(trx))),
      0,
      'never twice',
    );
  });
});
