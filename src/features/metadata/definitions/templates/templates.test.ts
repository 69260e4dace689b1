import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { forEachEngine, json } from '../../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../../test/helpers/factories.ts';
import type { UsageProbe } from '../../index.ts';
import { metadataApi } from '../../../../../test/helpers/metadata.ts';

const NONE = '00000000-0000-4000-8000-000000000000';

// Stands in for the assets feature: templates named in this set are "assigned to assets".
const assigned = new Set<string>();
const assignedProbe: UsageProbe = async (_db, _orgId, kind, ids) =>
  new Map(kind === 'template' ? ids.filter((id) => assigned.has(id)).map((id) => [id, '2 assets'] as const) : []);
after(() => assigned.clear());

forEachEngine(
  'metadata: templates',
  (ctx) => {
    it('every organization starts with a Default template holding the system group, and a Default security template', async () => {
      const org = await createTestOrg(ctx());
      const api = metadataApi(ctx(), org);
      const templates = json<any[]>(await api.call('GET', '/v1/metadata/template', undefined, 200));
      assert.equal(templates.length, 1);
      const t = templates[0].template;
      assert.equal(t.templateName, 'Default');
      assert.equal(t.isDefault, true);
      assert.deepEqual(t.templateType, ['default']);
      assert.equal(t.metadataGroups.length, 1);
      const system = t.metadataGroups[0];
      assert.equal(system.metadataGroupName, 'System');
      assert.equal(system.system, true);
      assert.deepEqual(
        system.metadataAttributes.map((a: any) => a.searchField),
        [
          'title',
          'description',
          'keywords',
          'copyright',
          'creator',
          'credit_line',
          'usage_rights',
          'expiration_date',
          'system_filename',
          'system_file_size',
          'system_file_type',
          'usage_terms',
          'rights_territories',
          'rights_channels',
          'rights_start_date',
        ],
      );
      assert.deepEqual(
        system.metadataAttributes.map((a: any) => a.fieldOrder),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
      );
      assert.equal(system.metadataAttributes.find((a: any) => a.searchField === 'system_file_size').readonly, true);
      assert.equal(
        system.metadataAttributes.find((a: any) => a.searchField === 'usage_rights').type,
        'controlledVocabulary',
      );
      assert.deepEqual(
        json(await api.call('GET', `/v1/metadata/template/${t.templateId}`, undefined, 200)).template,
        t,
      );
      const security = json<any[]>(
        await ctx().inject({ method: 'GET', url: '/v1/security/template', headers: org.admin.headers }),
      );
      assert.ok(security.some((s) => s.templateName === 'Default'));
    });

    it('POST /v1/metadata/template: ordered, de-duplicated groupIds with the system group last; defaults, types and access templates', async () => {
      const org = await createTestOrg(ctx());
      const api = metadataApi(ctx(), org);
      const vocab = await api.vocabulary('Seasons', ['Spring', 'Summer']);
      const a = await api.attribute({
        name: 'Season',
        type: 'controlledVocabulary',
        controlledVocabularyId: vocab.metadataDefinitionId,
      });
      const b = await api.attribute({ name: 'Campaign', type: 'text', length: 20 });
      const g1 = await api.group('Campaign Info', [b.id]);
      const g2 = await api.group('Season Info', [a.id]);
      const systemId = json(await api.call('GET', '/v1/metadata/groups?searchTerm=system')).results[0].id;
      const security = json<any[]>(
        await ctx().inject({ method: 'GET', url: '/v1/security/template', headers: org.admin.headers }),
      )[0];
      const res = await api.call(
        'POST',
        '/v1/metadata/template',
        {
          name: 'Campaign',
          groupIds: [g2.id, systemId, g1.id, g2.id],
          templateType: ['asset'],
          attributesDefaultValue: [
            { searchField: 'season', value: 'Summer' },
            { searchField: 'campaign', value: 'Evergreen' },
          ],
          accessTemplates: [security.templateId],
        },
        201,
      );
      const t = json(res);
      assert.deepEqual(t.groupIds, [g2.id, g1.id, systemId]);
      assert.deepEqual(t.templateType, ['asset']);
      assert.equal(t.customerId.length, 13);
      assert.equal(t.createdBy, org.adminUserId);
      assert.equal(t.inUse, false);
      assert.deepEqual(t.accessTemplates, [{ id: security.templateId, name: 'Default' }]);
      assert.deepEqual(t.attributesDefaultValue, [
        { searchField: 'season', value: 'Summer' },
        { searchField: 'campaign', value: 'Evergreen' },
      ]);
      assert.deepEqual(
        t.templateDenormalized.map((g: any) => g.metadataGroupName),
        ['Season Info', 'Campaign Info', 'System'],
      );
      const legacy = json(await api.call('GET', `/v1/metadata/template/${t.templateId}`, undefined, 200)).template;
      assert.deepEqual(
        legacy.metadataGroups.map((g: any) => g.groupOrder),
        [0, 1, 2],
      );
      const created = await ctx()
        .deps.db.selectFrom('events')
        .select('body')
        .where('org_id', '=', org.orgId)
        .where('type', '=', 'metadata.template.created')
        .execute();
      assert.deepEqual(JSON.parse(created[0]!.body).template.name, { previous: null, current: 'Campaign' });
    });

    it('POST refuses duplicate attributes (400), duplicate names (409, any case), unknown groups, types, access templates and bad defaults', async () => {
      const org = await createTestOrg(ctx());
      const api = metadataApi(ctx(), org);
      const a = await api.attribute({ name: 'Alpha', type: 'text', length: 5 });
      const d = await api.attribute({ name: 'When', type: 'date' });
      const g1 = await api.group('G1', [a.id, d.id]);
      const g2 = await api.group('G2', [a.id]);
      const dup = await api.call('POST', '/v1/metadata/template', { name: 'T', groupIds: [g1.id, g2.id] }, 400);
      assert.match(json(dup).message, /attribute "Alpha" would appear twice, in groups/);
      assert.equal(json(dup).details[0].field, 'body.groupIds');
      await api.template('Brochure', [g1.id]);
      assert.equal(
        json(await api.call('POST', '/v1/metadata/template', { name: 'BROCHURE', groupIds: [g1.id] }, 409)).details[0]
          .field,
        'body.name',
      );
      assert.equal(
        json(await api.call('POST', '/v1/metadata/template', { name: 'T', groupIds: [NONE] }, 400)).details[0].field,
        'body.groupIds[0]',
      );
      assert.equal(
        json(await api.call('POST', '/v1/metadata/template', { name: 'T', groupIds: [], templateType: ['proof'] }, 400))
          .details[0].field,
        'body.templateType[0]',
      );
      assert.equal(
        json(await api.call('POST', '/v1/metadata/template', { name: 'T', groupIds: [], accessTemplates: [NONE] }, 400))
          .details[0].field,
        'body.accessTemplates[0]',
      );
      assert.equal(
        json(
          await api.call(
            'POST',
            '/v1/metadata/template',
            { name: 'T', groupIds: [g1.id], attributesDefaultValue: [{ searchField: 'nope', value: 'x' }] },
            400,
          ),
        ).details[0].field,
        'body.attributesDefaultValue[0].searchField',
      );
      const badValue = json(
        await api.call(
          'POST',
          '/v1/metadata/template',
          {
            name: 'T',
            groupIds: [g1.id],
            attributesDefaultValue: [
              { searchField: 'alpha', value: 'too long' },
              { searchField: 'when', value: '02/31/2024' },
            ],
          },
          400,
        ),
      );
      assert.deepEqual(
        badValue.details.map((x: any) => x.field),
        ['body.attributesDefaultValue[0].value', 'body.attributesDefaultValue[1].value'],
      );
      assert.equal(
        json(
          await api.call(
            'POST',
            '/v1/metadata/template',
            { name: 'T', groupIds: [], attributesDefaultValue: [{ searchField: 'system_file_size', value: '1' }] },
            400,
          ),
        ).details[0].field,
        'body.attributesDefaultValue[0].value',
      );
      assert.equal(
        json(await api.call('POST', '/v1/metadata/template', { groupIds: [] }, 400)).details[0].field,
        'body.name',
      );
      assert.equal(
        json(await api.call('POST', '/v1/metadata/template', { name: 'T' }, 400)).details[0].field,
        'body.groupIds',
      );
      const none = await ctx()
        .deps.db.selectFrom('metadata_templates')
        .select('name')
        .where('org_id', '=', org.orgId)
        .execute();
      assert.deepEqual(none.map((r) => r.name).sort(), ['Brochure', 'Default'], 'no half-written template');
    });

    it('PATCH: partial update with the reference rules (immutable 400, unknown 400, empty 400, name clash 409, system group re-appended)', async () => {
      const org = await createTestOrg(ctx());
      const api = metadataApi(ctx(), org);
      const a = await api.attribute({ name: 'Alpha', type: 'text' });
      const b = await api.attribute({ name: 'Beta', type: 'text' });
      const g1 = await api.group('G1', [a.id]);
      const g2 = await api.group('G2', [b.id]);
      await api.template('Other', []);
      const t = await api.template('Spec', [g1.id], { attributesDefaultValue: [{ searchField: 'alpha', value: 'x' }] });
      const url = `/v1/metadata/template/${t.templateId}`;
      for (const key of [
        'templateId',
        'customerId',
        'createdBy',
        'createdEpoch',
        'createdDate',
        'templateType',
        'templateDenormalized',
        'dependencies',
      ]) {
        const res = await api.call('PATCH', url, { [key]: key === 'templateType' ? ['action'] : 'x' }, 400);
        assert.equal(json(res).details[0].field, `body.${key}`);
        assert.match(json(res).message, /immutable/);
      }
      assert.equal(json(await api.call('PATCH', url, { colour: 'red' }, 400)).details[0].field, 'body.colour');
      assert.equal(json(await api.call('PATCH', url, {}, 400)).details[0].field, 'body');
      assert.equal(json(await api.call('PATCH', url, { name: 'OTHER' }, 409)).details[0].field, 'body.name');
      assert.match(
        json(await api.call('PATCH', url, { groupIds: [g2.id] }, 400)).message,
        /attributesDefaultValue would no longer fit/,
      );
      const changed = json(
        await api.call(
          'PATCH',
          url,
          {
            name: 'Spec v2',
            groupIds: [g2.id, g1.id],
            attributesDefaultValue: [{ searchField: 'beta', value: 'y' }],
            templateOverride: { layout: 'compact' },
          },
          200,
        ),
      );
      assert.equal(changed.name, 'Spec v2');
      assert.equal(changed.groupIds.length, 3);
      assert.deepEqual(changed.groupIds.slice(0, 2), [g2.id, g1.id]);
      assert.deepEqual(changed.templateOverride, { layout: 'compact' });
      assert.deepEqual(changed.attributesDefaultValue, [{ searchField: 'beta', value: 'y' }]);
      const cleared = json(await api.call('PATCH', url, { accessTemplates: [] }, 200));
      assert.deepEqual(cleared.accessTemplates, []);
      const events = await ctx()
        .deps.db.selectFrom('events')
        .select('body')
        .where('org_id', '=', org.orgId)
        .where('type', '=', 'metadata.template.updated')
        .orderBy('created_at')
        .execute();
      const first = JSON.parse(events[0]!.body).template;
      assert.deepEqual(first.name, { previous: 'Spec', current: 'Spec v2' });
      assert.deepEqual(first.type, { previous: 'Asset', current: 'Asset' });
      assert.deepEqual(first.groups.added, [{ groupId: g2.id }]);
      assert.deepEqual(first.groups.removed, []);
      assert.ok(
        json(await api.call('GET', '/v1/metadata/changes')).results.some(
          (c: any) => c.kind === 'template.updated' && c.subjectId === t.templateId,
        ),
      );
      assert.equal((await api.call('PATCH', `/v1/metadata/template/${NONE}`, { name: 'x' })).statusCode, 404);
    });

    it('GET /v1/metadata/templates pages with inUse; DELETE is refused while in use and for the default template', async () => {
      const org = await createTestOrg(ctx());
      const api = metadataApi(ctx(), org);
      const t1 = await api.template('Alpha Template', []);
      const t2 = await api.template('Beta Template', []);
      assigned.add(t1.templateId);
      const page = json(await api.call('GET', '/v1/metadata/templates?limit=2', undefined, 200));
      assert.equal(page.hitCount, 3);
      assert.deepEqual(
        page.results.map((t: any) => [t.name, t.inUse]),
        [
          ['Alpha Template', true],
          ['Beta Template', false],
        ],
      );
      assert.deepEqual(
        json(await api.call('GET', '/v1/metadata/templates?searchTerm=beta')).results.map((t: any) => t.name),
        ['Beta Template'],
      );
      assert.deepEqual(
        json(await api.call('GET', '/v1/metadata/templates?order=desc&from=1')).results.map((t: any) => t.name),
        ['Beta Template', 'Alpha Template'],
      );
      assert.equal((await api.call('GET', '/v1/metadata/templates?limit=101')).statusCode, 400);
      assert.match(
        json(await api.call('DELETE', `/v1/metadata/template/${t1.templateId}`, undefined, 409)).message,
        /in use: 2 assets/,
      );
      const def =
        page.results.find((t: any) => t.isDefault) ??
        json(await api.call('GET', '/v1/metadata/templates?searchTerm=default')).results[0];
      assert.match(
        json(await api.call('DELETE', `/v1/metadata/template/${def.templateId}`, undefined, 409)).message,
        /default metadata template/,
      );
      await api.call('DELETE', `/v1/metadata/template/${t2.templateId}`, undefined, 204);
      assert.equal((await api.call('GET', `/v1/metadata/template/${t2.templateId}`)).statusCode, 404);
      const deleted = await ctx()
        .deps.db.selectFrom('events')
        .select('body')
        .where('org_id', '=', org.orgId)
        .where('type', '=', 'metadata.template.deleted')
        .execute();
      assert.deepEqual(JSON.parse(deleted[0]!.body).template, { id: t2.templateId, name: 'Beta Template' });
    });

    it('access templates limit who may use a template; the legacy reads show only usable templates to non-administrators', async () => {
      const org = await createTestOrg(ctx());
      const api = metadataApi(ctx(), org);
      const group = json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/security/groups',
          headers: org.admin.headers,
          payload: { groupName: 'Press' },
        }),
      );
      const sec = json(
        await ctx().inject({
          method: 'POST',
          url: '/v1/security/template',
          headers: org.admin.headers,
          payload: {
            templateName: 'Press only',
            securityDenormalized: [{ groupId: group.groupId, permissions: ['6c1f0c1e-5b1a-4e1a-9a51-000000000001'] }],
          },
        }),
      );
      const restricted = await api.template('Press Release', [], { accessTemplates: [{ id: sec.templateId }] });
      const outsider = await createTestUser(ctx(), org, { privileges: ['upload'] });
      const insider = await createTestUser(ctx(), org, { privileges: ['upload'], groupIds: [group.groupId] });
      const names = async (headers: Record<string, string>) =>
        json<any[]>(await ctx().inject({ method: 'GET', url: '/v1/metadata/template', headers }))
          .map((t) => t.template.templateName)
          .sort();
      assert.deepEqual(await names(outsider.headers), ['Default']);
      assert.deepEqual(await names(insider.headers), ['Default', 'Press Release']);
      assert.equal(
        (
          await ctx().inject({
            method: 'GET',
            url: `/v1/metadata/template/${restricted.templateId}`,
            headers: outsider.headers,
          })
        ).statusCode,
        404,
      );
      assert.equal(
        (
          await ctx().inject({
            method: 'GET',
            url: `/v1/metadata/template/${restricted.templateId}`,
            headers: insider.headers,
          })
        ).statusCode,
        200,
      );
      const { canUseTemplate } = await import('../../index.ts');
      const { loadUserPrincipal } = await import('../../../identity/index.ts');
      assert.equal(
        await canUseTemplate(
          ctx().deps.db,
          (await loadUserPrincipal(ctx().deps.db, outsider.userId))!,
          restricted.templateId,
        ),
        false,
      );
      assert.equal(
        await canUseTemplate(
          ctx().deps.db,
          (await loadUserPrincipal(ctx().deps.db, insider.userId))!,
          restricted.templateId,
        ),
        true,
      );
      const viewer = await createTestUser(ctx(), org, { privileges: ['download'] });
      assert.equal(
        (await ctx().inject({ method: 'GET', url: '/v1/metadata/template', headers: viewer.headers })).statusCode,
        403,
      );
      // Deleting the security template leaves the metadata template closed, never open.
      assert.equal(
        (
          await ctx().inject({
            method: 'DELETE',
            url: `/v1/security/template/${sec.templateId}`,
            headers: org.admin.headers,
          })
        ).statusCode,
        204,
      );
      assert.deepEqual(await names(insider.headers), ['Default']);
    });
  },
  { appOptions: { usageProbes: [assignedProbe] } },
);
