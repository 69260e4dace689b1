import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../../test/helpers/factories.ts';
import { ACTION_OBJECT_JOB } from '../../index.ts';
import { metadataApi } from '../../../../../test/helpers/metadata.ts';

// templateType on create (reference §10.7): default | asset | action; legacy labels are read-only.
forEachEngine('metadata: template types', (ctx) => {
  it('creates templates of each type and combination; absent or empty templateType is ["default"]; case and repeats are forgiven', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const cases: [unknown, string[]][] = [
      [undefined, ['default']],
      [[], ['default']],
      [['default'], ['default']],
      [['asset'], ['asset']],
      [['action'], ['action']],
      [
        ['asset', 'action'],
        ['asset', 'action'],
      ],
      [
        ['default', 'asset', 'action'],
        ['default', 'asset', 'action'],
      ],
      [
        ['Action', 'ACTION', ' asset '],
        ['action', 'asset'],
      ],
      ['asset', ['asset']],
    ];
    for (const [i, [sent, stored]] of cases.entries()) {
      const t = await api.template(`Typed ${i}`, [], sent === undefined ? {} : { templateType: sent });
      assert.deepEqual(t.templateType, stored, `templateType ${JSON.stringify(sent)}`);
      assert.equal(t.actionObjectId, null, 'no Action object until the job has run');
      const legacy = json(await api.call('GET', `/v1/metadata/template/${t.templateId}`, undefined, 200)).template;
      assert.deepEqual(legacy.templateType, stored);
      assert.equal(legacy.actionObjectId, null);
    }
    const paged = json(await api.call('GET', '/v1/metadata/templates?searchTerm=typed&limit=100', undefined, 200));
    assert.ok(paged.results.every((t: any) => 'actionObjectId' in t));
  });

  it('refuses unknown and legacy-only types with 400 naming the item; nothing is written', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    for (const [body, field, pattern] of [
      [['widget'], 'body.templateType[0]', /not a template type/],
      [['asset', 'search'], 'body.templateType[1]', /legacy template type/],
      [['proof'], 'body.templateType[0]', /legacy template type/],
      [['tile'], 'body.templateType[0]', /legacy template type/],
      [['action', ''], 'body.templateType[1]', /not a template type/],
    ] as const) {
      const res = json(
        await api.call('POST', '/v1/metadata/template', { name: 'Bad', groupIds: [], templateType: body }, 400),
      );
      assert.equal(res.details[0].field, field);
      assert.match(res.message, pattern);
    }
    assert.match(
      json(await api.call('POST', '/v1/metadata/template', { name: 'Bad', groupIds: [], templateType: [7] }, 400))
        .details[0].field,
      /templateType/,
    );
    const names = (
      await ctx().deps.db.selectFrom('metadata_templates').select('name').where('org_id', '=', org.orgId).execute()
    ).map((r) => r.name);
    assert.deepEqual(names, ['Default']);
    const jobs = await ctx()
      .deps.db.selectFrom('jobs')
      .select('id')
      .where('org_id', '=', org.orgId)
      .where('type', '=', ACTION_OBJECT_JOB)
      .execute();
    assert.equal(jobs.length, 0);
  });

  it('legacy types stored by an import are shown on read as they are', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const t = await api.template('Imported', []);
    await ctx()
      .deps.db.updateTable('metadata_templates')
      .set({ template_types: JSON.stringify(['search', 'proof']) })
      .where('id', '=', t.templateId)
      .execute();
    assert.deepEqual(
      json(await api.call('GET', `/v1/metadata/template/${t.templateId}`, undefined, 200)).template.templateType,
      ['search', 'proof'],
    );
    assert.deepEqual(
      json(await api.call('GET', '/v1/metadata/templates?searchTerm=imported', undefined, 200)).results[0].templateType,
      ['search', 'proof'],
    );
  });

  it('templateType is immutable: PATCH with it is 400 naming it, whatever the value, and changes nothing', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const t = await api.template('Fixed', [], { templateType: ['asset'] });
    for (const value of [['action'], ['asset'], [], 'default']) {
      const res = json(
        await api.call('PATCH', `/v1/metadata/template/${t.templateId}`, { name: 'Renamed', templateType: value }, 400),
      );
      assert.equal(res.details[0].field, 'body.templateType');
      assert.match(res.message, /immutable/);
    }
    const after = json(await api.call('GET', `/v1/metadata/template/${t.templateId}`, undefined, 200)).template;
    assert.equal(after.templateName, 'Fixed');
    assert.deepEqual(after.templateType, ['asset']);
  });

  it('an action-type template queues the Action-object job in its own transaction, on create, update and delete; others queue nothing', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const jobs = async () =>
      (
        await ctx()
          .deps.db.selectFrom('jobs')
          .select('payload')
          .where('org_id', '=', org.orgId)
          .where('type', '=', ACTION_OBJECT_JOB)
          .orderBy('created_at')
          .orderBy('id')
          .execute()
      ).map((j) => JSON.parse(j.payload));
    const plain = await api.template('Plain', [], { templateType: ['asset'] });
    await api.call('PATCH', `/v1/metadata/template/${plain.templateId}`, { name: 'Plain 2' }, 200);
    await api.call('DELETE', `/v1/metadata/template/${plain.templateId}`, undefined, 204);
    assert.deepEqual(await jobs(), []);
    const action = await api.template('Review', [], { templateType: ['action'] });
    assert.deepEqual(await jobs(), [{ templateId: action.templateId }]);
    await api.call('PATCH', `/v1/metadata/template/${action.templateId}`, { name: 'Review 2' }, 200);
    assert.equal((await jobs()).length, 2);
    // A refused change queues nothing.
    await api.call('PATCH', `/v1/metadata/template/${action.templateId}`, { templateType: ['asset'] }, 400);
    assert.equal((await jobs()).length, 2);
    await api.call('DELETE', `/v1/metadata/template/${action.templateId}`, undefined, 204);
    const last = (await jobs())[2];
    assert.equal(last.templateId, action.templateId);
    assert.equal(last.actionObjectId ?? null, null, 'no object was made yet, so none to retire');
    const created = await ctx()
      .deps.db.selectFrom('events')
      .select('body')
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'metadata.template.created')
      .orderBy('created_at')
      .execute();
    assert.deepEqual(
      created.map((e) => JSON.parse(e.body).template.type.current),
      ['Asset', 'Action'],
    );
    const updated = await ctx()
      .deps.db.selectFrom('events')
      .select('body')
      .where('org_id', '=', org.orgId)
      .where('type', '=', 'metadata.template.updated')
      .orderBy('created_at')
      .execute();
    assert.deepEqual(JSON.parse(updated.at(-1)!.body).template.type, { previous: 'Action', current: 'Action' });
  });
});
