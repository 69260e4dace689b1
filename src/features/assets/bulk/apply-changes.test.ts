import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import { startWorkers } from '../../../workers.ts';
import { metadataApi } from '../../../../test/helpers/metadata.ts';

// Definition changes reach stored assets and the search index only through POST /v1/metadata/apply.
forEachEngine('assets: POST /v1/metadata/apply brings assets and the search index in line', (ctx) => {
  it('a renamed vocabulary value and an attribute removed from the template reach assets and search after apply', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const api = metadataApi(c, org);
    const vocab = await api.vocabulary('Workflow', ['Draft', 'Final']);
    const status = await api.attribute({
      name: 'Workflow State',
      type: 'controlledVocabulary',
      controlledVocabularyId: vocab.metadataDefinitionId,
      facetable: true,
    });
    const code = await api.attribute({ name: 'Job Code', type: 'text' });
    const group = await api.group('Production', [status.id, code.id]);
    const template = await api.template('Production', [group.id]);
    const created = await c.inject({
      method: 'POST',
      url: '/v1/assets/asset',
      headers: org.admin.headers,
      payload: {
        metadataTemplateId: template.templateId,
        securityTemplateIds: [org.defaultTemplateId],
        metadata: [
          { name: 'Workflow State', value: 'Draft' },
          { name: 'Job Code', value: 'JX-41' },
          { name: 'Title', value: 'Poster' },
        ],
      },
    });
    assert.equal(created.statusCode, 200, created.body);
    const objectId = created.json().data?.objectId ?? created.json().objectId;
    const read = async () =>
      json(await c.inject({ method: 'GET', url: `/v1/asset/${objectId}`, headers: org.admin.headers }));
    const search = async (term: string) =>
      json(
        await c.inject({
          method: 'POST',
          url: '/v1/search/keyword',
          headers: org.admin.headers,
          payload: { searchTerm: [term] },
        }),
      ).totalCount;
    assert.equal(await search('Draft'), 1);

    c.clock.advance(1000);
    await api.call(
      'PATCH',
      `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`,
      { update: [{ valueId: api.valueId(vocab, 'Draft'), valueName: 'Proofing' }] },
      200,
    );
    await api.call('PATCH', `/v1/metadata/groups/${group.id}`, { attributeIds: [status.id] }, 200);
    // Stored documents hold ids, so reads by name follow at once; the denormalized copy and the index wait for apply.
    const simple = json(
      await c.inject({ method: 'GET', url: `/v1/assets/asset/${objectId}?system=false`, headers: org.admin.headers }),
    ).data.metadata;
    assert.equal(simple.find((m: any) => m.name === 'Workflow State').value, 'Proofing');
    assert.equal((await read()).metadataDenormalized.workflow_state, 'Draft');
    const kinds = json(await api.call('GET', '/v1/metadata/changes', undefined, 200)).results.map((r: any) => r.kind);
    assert.ok(kinds.includes('vocabulary.value.renamed'), kinds.join());

    c.clock.advance(1000);
    const started = json(await api.call('POST', '/v1/metadata/apply', {}, 202));
    const workers = startWorkers(c.deps);
    try {
      await workers.drain();
    } finally {
      await workers.stop();
    }
    assert.equal(json(await api.call('GET', `/v1/action/${started.actionId}`, undefined, 200)).status, 'succeeded');
    const after = await read();
    assert.equal(after.metadataDenormalized.workflow_state, 'Proofing');
    assert.equal(after.metadataDenormalized.job_code, undefined, 'the removed attribute left the denormalized copy');
    assert.equal(
      after.metadata.find((m: any) => m.metadataDefinitionId === code.id),
      undefined,
      'and the document',
    );
    assert.equal(await search('Proofing'), 1, 'the index follows');
    assert.equal(await search('Draft'), 0);
    assert.equal(await search('JX-41'), 0);
  });
});
