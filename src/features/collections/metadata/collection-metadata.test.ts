import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg, type TestOrg } from '../../../../test/helpers/factories.ts';
import { metadataApi, rnd } from '../../../../test/helpers/metadata.ts';

// Collections are a metadata write path too: with a template, values go through the validation library.
forEachEngine('collections: metadata checked against the collection template', (ctx) => {
  let org: TestOrg;
  let templateId: string;
  let codeId: string;
  before(async () => {
    org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const code = await api.attribute({ name: 'Code', type: 'text', length: 5, required: true });
    const due = await api.attribute({ name: 'Due', type: 'date', dateFormat: 'MM/dd/yyyy' });
    codeId = code.id;
    templateId = (
      await api.template(`Collection ${rnd()}`, [(await api.group(`Collection ${rnd()}`, [code.id, due.id])).id])
    ).templateId;
  });
  const create = (payload: Record<string, unknown>) =>
    ctx().inject({
      method: 'POST',
      url: '/v1/collection',
      headers: org.admin.headers,
      payload: { collectionType: 'private', name: `C ${rnd()}`, ...payload },
    });

  it('accepts valid documents in either encoding (also as a JSON string) and keeps them as written; required attributes are not enforced', async () => {
    for (const metadataDocument of [
      [{ name: 'Code', value: 'AB12' }],
      [{ metadataDefinitionId: codeId, metadataDefinitionValue: 'AB12' }],
      JSON.stringify([{ name: 'Due', value: '12/31/2026' }]),
      [],
    ]) {
      const res = await create({ metadataTemplateId: templateId, metadataDocument });
      assert.equal(res.statusCode, 200, res.body);
      const c = json(
        await ctx().inject({
          method: 'GET',
          url: `/v1/collection/${res.json().collectionId}`,
          headers: org.admin.headers,
        }),
      );
      assert.deepEqual(
        c.metadataDocument,
        typeof metadataDocument === 'string' ? JSON.parse(metadataDocument) : metadataDocument,
      );
    }
  });

  it('refuses invalid values with 400 naming each path, an unknown template naming metadataTemplateId; nothing is written', async () => {
    const count = async () =>
      (await ctx().deps.db.selectFrom('collections').select('id').where('org_id', '=', org.orgId).execute()).length;
    const before = await count();
    const bad = await create({
      metadataTemplateId: templateId,
      metadataDocument: [
        { name: 'Code', value: 'TOO LONG' },
        { name: 'Due', value: '02/30/2026' },
        { name: 'Nope', value: 'x' },
      ],
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.deepEqual(
      bad.json().details.map((d: any) => d.field),
      ['body.metadataDocument[0].value', 'body.metadataDocument[1].value', 'body.metadataDocument[2].name'],
    );
    const legacy = await create({
      metadataTemplateId: templateId,
      metadataDocument: [{ metadataDefinitionId: codeId, metadataDefinitionValue: 'TOO LONG' }],
    });
    assert.equal(legacy.json().details[0].field, 'body.metadataDocument[0].metadataDefinitionValue');
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await create({ metadataTemplateId: id, metadataDocument: [] });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().details[0].field, 'body.metadataTemplateId');
    }
    const other = await createTestOrg(ctx());
    const foreign = await ctx().inject({
      method: 'POST',
      url: '/v1/collection',
      headers: other.admin.headers,
      payload: { collectionType: 'private', name: 'x', metadataTemplateId: templateId, metadataDocument: [] },
    });
    assert.equal(foreign.statusCode, 400, "another organization's template is unknown");
    assert.equal(await count(), before);
  });

  it('PATCH /v1/collections/{id} checks the changed values against the collection template', async () => {
    const id = json(
      await create({ metadataTemplateId: templateId, metadataDocument: [{ name: 'Code', value: 'A1' }] }),
    ).collectionId;
    const bad = await ctx().inject({
      method: 'PATCH',
      url: `/v1/collections/${id}`,
      headers: org.admin.headers,
      payload: { metadata: [{ name: 'Due', value: 'tomorrow' }] },
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.equal(bad.json().details[0].field, 'body.metadata[0].value');
    const ok = await ctx().inject({
      method: 'PATCH',
      url: `/v1/collections/${id}`,
      headers: org.admin.headers,
      payload: { metadata: [{ name: 'Due', value: '01/15/2027' }] },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(ok.json().data.metadataDocument, [
      { name: 'Code', value: 'A1' },
      { name: 'Due', value: '01/15/2027' },
    ]);
  });
});
