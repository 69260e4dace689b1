import assert from 'node:assert/strict';
import { it } from 'node:test';
import { defaultTemplate } from '../../../../test/helpers/assets.ts';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';

/**
 * One check (checkSecurityTemplateIds) serves assets, saved searches and story boards; each API keeps
 * its own rules and words. A template of another organization is as unknown as a made-up id.
 */
forEachEngine('security template ids sent by callers', (ctx) => {
  it('assets: one error naming the list and every unknown id; at least one template; case does not matter', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const { id: metadataTemplateId } = await defaultTemplate(ctx(), org);
    const create = (securityTemplateIds: string[]) =>
      ctx().inject({
        method: 'POST',
        url: '/v1/asset',
        headers: org.admin.headers,
        payload: { metadataTemplateId, securityTemplateIds, filename: 'a.txt', filesize: 3 },
      });
    const unknown = await create([org.defaultTemplateId, other.defaultTemplateId]);
    assert.equal(unknown.statusCode, 400, unknown.body);
    assert.deepEqual(json(unknown).details[0], {
      field: 'body.securityTemplateIds',
      message: `Invalid security template ID(s): ${other.defaultTemplateId}`,
    });
    const empty = await create([]);
    assert.equal(empty.statusCode, 400, empty.body);
    assert.deepEqual(json(empty).details[0], {
      field: 'body.securityTemplateIds',
      message: 'Invalid Asset: Missing Security Template ID(s)',
    });
    const upper = await create([org.defaultTemplateId.toUpperCase()]);
    assert.equal(upper.statusCode, 200, upper.body);
  });

  it('saved searches: the first id the caller may not view through, by its index', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/saved-searches',
      headers: org.admin.headers,
      payload: { name: 'Shared', query: { searchTerm: ['x'] }, securityTemplateIds: [other.defaultTemplateId] },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(json(res).details[0], {
      field: 'body.securityTemplateIds.0',
      message: 'no security template with this id through which you may view',
    });
  });

  it('story boards: the first unknown id, by its index', async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/storyboards',
      headers: org.admin.headers,
      payload: { title: 'Board', securityTemplateIds: [org.defaultTemplateId, other.defaultTemplateId] },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(json(res).details[0], {
      field: 'body.securityTemplateIds.1',
      message: 'security template not found',
    });
  });
});
