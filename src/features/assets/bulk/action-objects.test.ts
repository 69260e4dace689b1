import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { login } from '../../../../test/helpers/auth.ts';
import { forEachEngine, json, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser, type TestOrg } from '../../../../test/helpers/factories.ts';
import { securitySuite } from '../../../../test/helpers/security.ts';
import type { Worker } from '../../../core/jobs/worker.ts';
import { enqueueJob } from '../../../core/jobs/queue.ts';
import { ACTION_OBJECT_JOB } from '../../metadata/index.ts';
import { metadataApi, rnd } from '../../../../test/helpers/metadata.ts';
import { assetWorker, createAsset, defaultTemplate } from '../../../../test/helpers/assets.ts';

/** Headers as the reference's examples send them: gateway X-API-Key, AccessToken, Authorization, Content-Type. */
async function clientHeaders(ctx: TestContext, user: { username: string; password: string }) {
  const { session } = await login(ctx, user);
  return {
    'x-api-key': 'AbCdEf0123456789gatewaykey',
    accesstoken: session.accessToken,
    authorization: session.accessToken,
    'content-type': 'application/json',
  };
}

/** An action-type template with a text attribute (default "Pending"), a required one and a vocabulary, made by `headers`. */
async function actionTemplate(
  ctx: TestContext,
  org: TestOrg,
  extra: Record<string, unknown> = {},
  headers = org.admin.headers,
) {
  const api = metadataApi(ctx, org);
  const status = await api.attribute({ name: `Status ${rnd()}`, type: 'text', length: 40 });
  const owner = await api.attribute({ name: `Owner ${rnd()}`, type: 'text', required: true });
  const group = await api.group(`Review ${rnd()}`, [status.id, owner.id]);
  const res = await ctx.inject({
    method: 'POST',
    url: '/v1/metadata/template',
    headers,
    payload: {
      name: `Review ${rnd()}`,
      groupIds: [group.id],
      templateType: ['action'],
      attributesDefaultValue: [{ searchField: status.searchField, value: 'Pending' }],
      ...extra,
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  return { template: res.json(), status, owner, group };
}

const templateOf = async (ctx: TestContext, org: TestOrg, id: string) =>
  json(await ctx.inject({ method: 'GET', url: `/v1/metadata/template/${id}`, headers: org.admin.headers })).template;

forEachEngine('assets: Action objects of action-type metadata templates (template-as-asset)', (ctx) => {
  let org: TestOrg;
  let worker: Worker;
  before(async () => {
    org = await createTestOrg(ctx());
    worker = assetWorker(ctx());
  });
  after(async () => worker.stop());

  it('the job makes the Action object; GET /v1/action/{id} answers the legacy Asset shape with objectType Action to a real client', async () => {
    const designer = await createTestUser(ctx(), org, { privileges: ['metadata_management'] });
    const { template, status, owner } = await actionTemplate(ctx(), org, {}, designer.headers);
    assert.equal(template.actionObjectId, null);
    await worker.drain();
    const legacy = await templateOf(ctx(), org, template.templateId);
    const objectId = legacy.actionObjectId;
    assert.ok(objectId, 'the template exposes its Action object once the job has run');
    const admin = json(
      await ctx().inject({
        method: 'GET',
        url: `/v1/metadata/templates?searchTerm=${encodeURIComponent(template.name)}`,
        headers: org.admin.headers,
      }),
    ).results[0];
    assert.equal(admin.actionObjectId, objectId);
    assert.equal(admin.inUse, false, 'its own Action object is not a use of the template');

    const headers = await clientHeaders(ctx(), org.admin);
    const res = await ctx().inject({ method: 'GET', url: `/v1/action/${objectId}/`, headers });
    assert.equal(res.statusCode, 200, res.body);
    const action = res.json();
    assert.equal(action.objectId, objectId);
    assert.equal(action.objectType, 'Action');
    assert.equal(action.metadataTemplateId, template.templateId);
    assert.equal(action.createdBy, designer.userId, 'createdBy is who created the template');
    assert.equal(action.filename, template.name);
    assert.equal(action.fileState, 'available');
    assert.equal(action.metadataState, 'available');
    assert.equal(action.currentVersion, 'Y');
    assert.equal(action.versionNumber, 1);
    assert.equal(action.customerId, org.customerId);
    assert.equal(action.contentState, 'none');
    for (const key of [
      'fileId',
      'originalFileId',
      'createdEpoch',
      'lastUpdatedEpoch',
      'metadata',
      'metadataDenormalized',
      'securityTemplateIds',
      'securityDenormalized',
      'renditions',
      'technicalMetadata',
    ]) {
      assert.ok(key in action, `${key} is present`);
    }
    assert.deepEqual(
      action.securityTemplateIds,
      [org.defaultTemplateId],
      'no access templates: the Default security template',
    );
    assert.ok(action.securityDenormalized.length > 0);
    // Defaults filled in; the required attribute without a default does not stop the object.
    assert.deepEqual(
      action.metadata.find((m: any) => m.metadataDefinitionId === status.id),
      { metadataDefinitionId: status.id, metadataDefinitionValue: 'Pending' },
    );
    assert.equal(
      action.metadata.find((m: any) => m.metadataDefinitionId === owner.id),
      undefined,
    );
    assert.equal(action.metadataDenormalized[status.searchField], 'Pending');
    assert.equal(action.metadataDenormalized.system_filename, template.name);
    // Also by fileId, as the reference allows.
    assert.equal(
      json(await ctx().inject({ method: 'GET', url: `/v1/action/${action.fileId}`, headers })).objectId,
      objectId,
    );
    // Invoked Actions (jobs) still read as before, from the same route.
    const apply = json(await ctx().inject({ method: 'POST', url: '/v1/metadata/apply', headers, payload: {} }));
    const job = json(await ctx().inject({ method: 'GET', url: `/v1/action/${apply.actionId}/`, headers }));
    assert.equal(job.id, apply.actionId);
    assert.equal(job.type, 'metadata.apply');
    assert.equal(job.objectType, 'Action');
  });

  it('is idempotent: a repeated job finds the object and makes no second one', async () => {
    const { template } = await actionTemplate(ctx(), org);
    await worker.drain();
    const first = (await templateOf(ctx(), org, template.templateId)).actionObjectId;
    await enqueueJob(ctx().deps.db, ctx().deps.clock.now(), {
      type: ACTION_OBJECT_JOB,
      orgId: org.orgId,
      payload: { templateId: template.templateId },
    });
    await enqueueJob(ctx().deps.db, ctx().deps.clock.now(), {
      type: ACTION_OBJECT_JOB,
      orgId: org.orgId,
      payload: { templateId: template.templateId },
    });
    await worker.drain();
    assert.equal((await templateOf(ctx(), org, template.templateId)).actionObjectId, first);
    const objects = await ctx()
      .deps.db.selectFrom('assets')
      .select('id')
      .where('org_id', '=', org.orgId)
      .where('metadata_template_id', '=', template.templateId)
      .execute();
    assert.deepEqual(
      objects.map((o) => o.id),
      [first],
    );
  });

  it('follows its template: name, attributes, defaults and access templates; lastUpdatedBy is who changed it', async () => {
    const api = metadataApi(ctx(), org);
    const { template, status, group } = await actionTemplate(ctx(), org);
    await worker.drain();
    const objectId = (await templateOf(ctx(), org, template.templateId)).actionObjectId;
    const extra = await api.attribute({ name: `Due ${rnd()}`, type: 'date', dateFormat: 'MM/dd/yyyy' });
    const more = await api.group(`Due ${rnd()}`, [extra.id]);
    const press = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/security/groups',
        headers: org.admin.headers,
        payload: { groupName: `Press ${rnd()}` },
      }),
    );
    const sec = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/security/template',
        headers: org.admin.headers,
        payload: {
          templateName: `Press ${rnd()}`,
          securityDenormalized: [{ groupId: press.groupId, permissions: ['6c1f0c1e-5b1a-4e1a-9a51-000000000001'] }],
        },
      }),
    );
    const editor = await createTestUser(ctx(), org, {
      privileges: ['metadata_management'],
      groupIds: [org.groups.administrators],
    });
    const renamed = `Renamed ${rnd()}`;
    const patch = await ctx().inject({
      method: 'PATCH',
      url: `/v1/metadata/template/${template.templateId}`,
      headers: editor.headers,
      payload: {
        name: renamed,
        groupIds: [more.id],
        attributesDefaultValue: [{ searchField: extra.searchField, value: '12/31/2026' }],
        accessTemplates: [sec.templateId],
      },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.equal(patch.json().actionObjectId, objectId);
    await worker.drain();
    const insider = await createTestUser(ctx(), org, { privileges: [], groupIds: [press.groupId] });
    const action = json(await ctx().inject({ method: 'GET', url: `/v1/action/${objectId}`, headers: insider.headers }));
    assert.equal(action.filename, renamed);
    assert.equal(action.lastUpdatedBy, editor.userId);
    assert.equal(
      action.metadata.find((m: any) => m.metadataDefinitionId === status.id),
      undefined,
      'attributes that left the template leave the object',
    );
    assert.equal(action.metadataDenormalized[status.searchField], undefined);
    assert.equal(
      action.metadata.find((m: any) => m.metadataDefinitionId === extra.id).metadataDefinitionValue,
      '12/31/2026',
    );
    assert.equal(action.metadataDenormalized[extra.searchField], '2026-12-31');
    assert.deepEqual(action.securityTemplateIds, [sec.templateId], 'its security follows the access templates');
    assert.ok(group.id);
    // Now only the Press group sees it: everyone else gets 404, like a missing one.
    const everyone = await createTestUser(ctx(), org, { privileges: ['upload'] });
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/action/${objectId}`, headers: everyone.headers })).statusCode,
      404,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/action/${objectId}`, headers: org.admin.headers })).statusCode,
      404,
      'Metadata Management alone does not open it',
    );
  });

  it('deleting the template is allowed (its object is no use of it) and sends the object to the recycle bin', async () => {
    const { template } = await actionTemplate(ctx(), org);
    await worker.drain();
    const objectId = (await templateOf(ctx(), org, template.templateId)).actionObjectId;
    const del = await ctx().inject({
      method: 'DELETE',
      url: `/v1/metadata/template/${template.templateId}`,
      headers: org.admin.headers,
    });
    assert.equal(del.statusCode, 204, del.body);
    await worker.drain();
    const action = json(
      await ctx().inject({ method: 'GET', url: `/v1/action/${objectId}`, headers: org.admin.headers }),
    );
    assert.equal(action.fileState, 'recycle bin');
    assert.ok(action.metadataDeletedEpoch > 0);
    // A template deleted before (or while) its job ran leaves no live object behind: either none was
    // made, or the one the running job made goes to the recycle bin.
    const early = await actionTemplate(ctx(), org);
    assert.equal(
      (
        await ctx().inject({
          method: 'DELETE',
          url: `/v1/metadata/template/${early.template.templateId}`,
          headers: org.admin.headers,
        })
      ).statusCode,
      204,
    );
    await worker.drain();
    const left = await ctx()
      .deps.db.selectFrom('assets')
      .select('id')
      .where('org_id', '=', org.orgId)
      .where('metadata_template_id', '=', early.template.templateId)
      .where('deleted_at', 'is', null)
      .execute();
    assert.deepEqual(left, []);
    // A template that assets use is still refused (409 naming the use).
    const both = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/metadata/template',
        headers: org.admin.headers,
        payload: { name: `Both ${rnd()}`, groupIds: [], templateType: ['asset', 'action'] },
      }),
    );
    await createAsset(ctx(), org, { metadataTemplateId: both.templateId });
    await worker.drain();
    const refused = await ctx().inject({
      method: 'DELETE',
      url: `/v1/metadata/template/${both.templateId}`,
      headers: org.admin.headers,
    });
    assert.equal(refused.statusCode, 409);
    assert.match(refused.json().message, /in use: 1 assets/);
  });

  it('assets may use default and asset templates, never an action-only one (400 naming metadataTemplateId)', async () => {
    const { template } = await actionTemplate(ctx(), org);
    const asset = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/metadata/template',
        headers: org.admin.headers,
        payload: { name: `Asset ${rnd()}`, groupIds: [], templateType: ['asset'] },
      }),
    );
    const both = json(
      await ctx().inject({
        method: 'POST',
        url: '/v1/metadata/template',
        headers: org.admin.headers,
        payload: { name: `Both ${rnd()}`, groupIds: [], templateType: ['action', 'asset'] },
      }),
    );
    const base = { metadata: [], securityTemplateIds: [org.defaultTemplateId] };
    for (const [url, field] of [
      ['/v1/asset', 'body.metadataTemplateId'],
      ['/v1/assets/asset', 'body.metadataTemplateId'],
    ] as const) {
      const res = await ctx().inject({
        method: 'POST',
        url,
        headers: org.admin.headers,
        payload: { ...base, metadataTemplateId: template.templateId },
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().details[0].field, field);
      assert.match(res.json().message, /action template/);
    }
    await createAsset(ctx(), org, { metadataTemplateId: asset.templateId });
    const mixed = await createAsset(ctx(), org, { metadataTemplateId: both.templateId });
    await createAsset(ctx(), org, { metadataTemplateId: (await defaultTemplate(ctx(), org)).id });
    // Moving an asset onto an action-only template is refused the same way.
    const move = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${mixed.objectId}`,
      headers: org.admin.headers,
      payload: { metadataTemplateId: template.templateId },
    });
    assert.equal(move.statusCode, 400, move.body);
    assert.equal(move.json().details[0].field, 'body.metadataTemplateId');
    const bulk = await ctx().inject({
      method: 'PATCH',
      url: '/v1/asset',
      headers: org.admin.headers,
      payload: { metadataTemplateId: template.templateId, objectIds: [mixed.objectId] },
    });
    assert.equal(bulk.statusCode, 400, bulk.body);
    assert.equal(bulk.json().details[0].field, 'body.metadataTemplateId');
  });

  it('asset write paths leave Action objects alone (409); another organization and callers without View get 404', async () => {
    const { template } = await actionTemplate(ctx(), org);
    await worker.drain();
    const objectId = (await templateOf(ctx(), org, template.templateId)).actionObjectId;
    const edit = await ctx().inject({
      method: 'PATCH',
      url: `/v1/asset/${objectId}`,
      headers: org.admin.headers,
      payload: { metadata: [] },
    });
    assert.equal(edit.statusCode, 409, edit.body);
    assert.match(edit.json().message, /Action object/);
    const version = await ctx().inject({
      method: 'POST',
      url: '/v1/asset',
      headers: org.admin.headers,
      payload: { originalFileId: objectId, metadata: [] },
    });
    assert.equal(version.statusCode, 409, version.body);
    const other = await createTestOrg(ctx());
    const foreign = await ctx().inject({
      method: 'GET',
      url: `/v1/action/${objectId}`,
      headers: await clientHeaders(ctx(), other.admin),
    });
    assert.equal(foreign.statusCode, 404);
    assert.equal(foreign.json().message, 'Action not found');
    const noGroups = await createTestUser(ctx(), org, { privileges: ['metadata_management', 'upload'], groupIds: [] });
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/action/${objectId}`, headers: noGroups.headers })).statusCode,
      404,
    );
    const everyone = await createTestUser(ctx(), org, { privileges: [] });
    assert.equal(
      (await ctx().inject({ method: 'GET', url: `/v1/action/${objectId}`, headers: everyone.headers })).statusCode,
      200,
      'the Default security template lets Everyone view',
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'GET',
          url: '/v1/action/00000000-0000-4000-8000-000000000000',
          headers: org.admin.headers,
        })
      ).statusCode,
      404,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/action/not-a-uuid', headers: org.admin.headers })).statusCode,
      400,
    );
  });

  securitySuite(ctx, '/v1/action/{id} (Action object)', {
    method: 'GET',
    resource: true,
    prepare: async (c, o) => {
      const { template } = await actionTemplate(c, o);
      // The block's worker also wakes on the enqueue; draining it (not a second worker) waits for the job.
      await worker.drain();
      return { url: `/v1/action/${(await templateOf(c, o, template.templateId)).actionObjectId}` };
    },
  });
});
