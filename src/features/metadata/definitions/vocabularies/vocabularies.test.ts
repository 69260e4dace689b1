import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../../../test/helpers/context.ts';
import { createTestOrg, createTestUser } from '../../../../../test/helpers/factories.ts';
import { metadataApi, rnd } from '../../../../../test/helpers/metadata.ts';

const NONE = '00000000-0000-4000-8000-000000000000';

async function eventsOf(ctx: any, orgId: string, type: string) {
  return (
    await ctx.deps.db.selectFrom('events').select('body').where('org_id', '=', orgId).where('type', '=', type).execute()
  ).map((r: any) => JSON.parse(r.body));
}

forEachEngine('metadata: controlled vocabularies', (ctx) => {
  it('creates, lists, reads, changes and deletes a vocabulary in the reference shapes', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const created = await api.call(
      'POST',
      '/v1/metadata/vocabulary',
      { name: 'Colors', values: ['Red', 'Green'] },
      200,
    );
    const vocab = json(created);
    assert.equal(vocab.metadataDefinitionName, 'Colors');
    assert.equal(vocab.metadataDefinitionSearchField, 'colors');
    assert.equal(vocab.metadataDefinitionType, 'controlledVocabulary');
    assert.match(vocab.customerId, /^\d{13}$/);
    assert.deepEqual(
      vocab.metadataDocument.values.map((v: any) => v.valueName),
      ['Red', 'Green'],
    );
    assert.equal(vocab.metadataDocument.searchable, true);

    const list = json<any[]>(await api.call('GET', '/v1/metadata/vocabulary', undefined, 200));
    const listed = list.find((v) => v.metadataDefinitionId === vocab.metadataDefinitionId);
    assert.ok(listed.metadata, 'list items carry the values under "metadata" (reference quirk)');
    assert.ok(
      list.some((v) => v.metadataDefinitionName === 'Usage Rights'),
      'the seeded vocabulary is listed',
    );

    const red = api.valueId(vocab, 'Red');
    const green = api.valueId(vocab, 'Green');
    const patched = json(
      await api.call(
        'PATCH',
        `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`,
        {
          name: 'Colours',
          add: ['Blue'],
          update: [{ valueId: red, valueName: 'Crimson Red' }],
          delete: [green],
        },
        200,
      ),
    );
    assert.equal(patched.metadataDefinitionName, 'Colours');
    assert.deepEqual(
      patched.metadataDocument.values.map((v: any) => v.valueName),
      ['Crimson Red', 'Blue'],
    );
    assert.equal(patched.metadataDefinitionSearchField, 'colors', 'the search field stays');
    const got = json(await api.call('GET', `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`, undefined, 200));
    assert.deepEqual(got, patched);

    // Renames and deletions of values are definition changes for POST /v1/metadata/apply.
    const changes = json(await api.call('GET', '/v1/metadata/changes', undefined, 200));
    assert.deepEqual(changes.results.map((c: any) => c.kind).sort(), [
      'vocabulary.value.renamed',
      'vocabulary.values.deleted',
    ]);
    assert.deepEqual(changes.results.find((c: any) => c.kind === 'vocabulary.value.renamed').data, {
      valueId: red,
      previous: 'Red',
      current: 'Crimson Red',
    });

    const deleted = await api.call('DELETE', `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`, undefined, 200);
    assert.deepEqual(json(deleted), { status: 'success', message: 'Metadata Definition delete operation succeeded' });
    const gone = await api.call('GET', `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`, undefined, 404);
    assert.equal(json(gone).message, 'Controlled vocabulary not found');
    assert.equal((await api.call('DELETE', `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`)).statusCode, 404);

    const types = (
      await ctx()
        .deps.db.selectFrom('events')
        .select('type')
        .where('org_id', '=', org.orgId)
        .where('type', 'like', 'metadata.vocabulary.%')
        .execute()
    ).map((r) => r.type);
    assert.deepEqual(types.sort(), [
      'metadata.vocabulary.created',
      'metadata.vocabulary.deleted',
      'metadata.vocabulary.updated',
    ]);
    const [update] = await eventsOf(ctx(), org.orgId, 'metadata.vocabulary.updated');
    assert.deepEqual(update.vocabulary.values.deleted, [green]);
  });

  it('refuses bad input with the reference messages and field names', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const empty = await api.call('POST', '/v1/metadata/vocabulary', { name: '  ', values: ['a'] }, 400);
    assert.equal(json(empty).message, 'body.name: name cannot be empty');
    const emptyValue = await api.call('POST', '/v1/metadata/vocabulary', { name: 'X', values: ['a', ''] }, 400);
    assert.equal(json(emptyValue).details[0].field, 'body.values[1]');
    assert.match(json(emptyValue).message, /value cannot be empty/);
    const dupValue = await api.call('POST', '/v1/metadata/vocabulary', { name: 'X', values: ['a', 'A'] }, 400);
    assert.match(json(dupValue).message, /appears twice/);
    await api.call('POST', '/v1/metadata/vocabulary', { name: 'Sizes', values: ['S'] }, 200);
    assert.equal(
      json(await api.call('POST', '/v1/metadata/vocabulary', { name: 'sizes', values: [] }, 409)).details[0].field,
      'body.name',
    );
    const noName = await api.call('POST', '/v1/metadata/vocabulary', { values: [] }, 400);
    assert.equal(json(noName).details[0].field, 'body.name');
    const vocab = await api.vocabulary('Fabrics', ['Cotton', 'Wool']);
    const id = vocab.metadataDefinitionId;
    assert.equal(json(await api.call('PATCH', `/v1/metadata/vocabulary/${id}`, {}, 400)).details[0].field, 'body');
    assert.equal(
      json(await api.call('PATCH', `/v1/metadata/vocabulary/${id}`, { delete: [NONE] }, 400)).details[0].field,
      'body.delete[0]',
    );
    assert.equal(
      json(
        await api.call('PATCH', `/v1/metadata/vocabulary/${id}`, { update: [{ valueId: NONE, valueName: 'x' }] }, 400),
      ).details[0].field,
      'body.update[0].valueId',
    );
    assert.equal(
      json(
        await api.call(
          'PATCH',
          `/v1/metadata/vocabulary/${id}`,
          { update: [{ valueId: api.valueId(vocab, 'Cotton'), valueName: '' }] },
          400,
        ),
      ).details[0].field,
      'body.update[0].valueName',
    );
    assert.match(
      json(await api.call('PATCH', `/v1/metadata/vocabulary/${id}`, { add: ['wool'] }, 400)).message,
      /appears twice/,
    );
    assert.equal((await api.call('PATCH', `/v1/metadata/vocabulary/${NONE}`, { add: ['x'] })).statusCode, 404);
    assert.equal((await api.call('GET', '/v1/metadata/vocabulary/not-a-uuid')).statusCode, 400);
  });

  it('cascading vocabularies carry parent links; a parent value with children cannot be deleted', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const { colors, shades, red } = await api.cascadeVocabularies();
    assert.equal(shades.metadataDocument.values.find((v: any) => v.valueName === 'Crimson').parentValueId, red);
    const badParent = await api.call(
      'POST',
      '/v1/metadata/vocabulary',
      { name: `Tones ${rnd()}`, values: [{ valueName: 'x', parentValueId: NONE }] },
      400,
    );
    assert.match(json(badParent).message, /parentValueId/);
    const res = await api.call(
      'PATCH',
      `/v1/metadata/vocabulary/${colors.metadataDefinitionId}`,
      { delete: [red] },
      409,
    );
    assert.match(json(res).message, /has values under it/);
    assert.equal((await api.call('DELETE', `/v1/metadata/vocabulary/${colors.metadataDefinitionId}`)).statusCode, 409);
    // Re-parenting is a definition change too.
    const navy = api.valueId(shades, 'Navy');
    await api.call(
      'PATCH',
      `/v1/metadata/vocabulary/${shades.metadataDefinitionId}`,
      { update: [{ valueId: navy, parentValueId: red }] },
      200,
    );
    const changes = json(await api.call('GET', '/v1/metadata/changes', undefined, 200));
    assert.ok(changes.results.some((c: any) => c.kind === 'vocabulary.value.reparented' && c.data.valueId === navy));
  });

  it('a vocabulary in use by an attribute cannot be deleted (409 names the attribute)', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const vocab = await api.vocabulary('Regions', ['EU', 'US']);
    await api.attribute({
      name: 'Region',
      type: 'controlledVocabulary',
      controlledVocabularyId: vocab.metadataDefinitionId,
    });
    const res = await api.call('DELETE', `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`, undefined, 409);
    assert.match(json(res).message, /used by attributes: Region/);
    assert.deepEqual(
      json(await api.call('GET', `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`)).usedBy.map(
        (u: any) => u.name,
      ),
      ['Region'],
    );
  });

  it('uploaders and template managers read vocabularies; only Metadata Management changes them', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const vocab = await api.vocabulary('Moods', ['Calm']);
    const uploader = await createTestUser(ctx(), org, { privileges: ['upload'] });
    const nobody = await createTestUser(ctx(), org, { privileges: ['download'] });
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/metadata/vocabulary', headers: uploader.headers })).statusCode,
      200,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'GET',
          url: `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`,
          headers: uploader.headers,
        })
      ).statusCode,
      200,
    );
    assert.equal(
      (await ctx().inject({ method: 'GET', url: '/v1/metadata/vocabulary', headers: nobody.headers })).statusCode,
      403,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'POST',
          url: '/v1/metadata/vocabulary',
          headers: uploader.headers,
          payload: { name: 'x', values: [] },
        })
      ).statusCode,
      403,
    );
    assert.equal(
      (
        await ctx().inject({
          method: 'PATCH',
          url: `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`,
          headers: uploader.headers,
          payload: { add: ['x'] },
        })
      ).statusCode,
      403,
    );
  });

  it('takes thousands of values in one request (created, added, deleted)', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const many = Array.from({ length: 5000 }, (_, i) => `Value ${i}`);
    const vocab = json(await api.call('POST', '/v1/metadata/vocabulary', { name: 'Big', values: many }, 200));
    assert.equal(vocab.metadataDocument.values.length, 5000);
    const more = Array.from({ length: 5000 }, (_, i) => `More ${i}`);
    const deleted = vocab.metadataDocument.values.slice(0, 3000).map((v: any) => v.valueId);
    const patched = json(
      await api.call(
        'PATCH',
        `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`,
        { add: more, delete: deleted },
        200,
      ),
    );
    assert.equal(patched.metadataDocument.values.length, 7000);
    assert.equal(patched.metadataDocument.values[0].valueName, 'Value 3000');
  });

  it("another organization's vocabulary is invisible (404) and cannot be used as a parent", async () => {
    const org = await createTestOrg(ctx());
    const other = await createTestOrg(ctx());
    const theirs = await metadataApi(ctx(), other).vocabulary('Secret', ['S']);
    const api = metadataApi(ctx(), org);
    assert.equal((await api.call('GET', `/v1/metadata/vocabulary/${theirs.metadataDefinitionId}`)).statusCode, 404);
    assert.ok(
      !json<any[]>(await api.call('GET', '/v1/metadata/vocabulary')).some(
        (v) => v.metadataDefinitionId === theirs.metadataDefinitionId,
      ),
    );
    const parent = theirs.metadataDocument.values[0].valueId;
    assert.equal(
      (
        await api.call('POST', '/v1/metadata/vocabulary', {
          name: 'Mine',
          values: [{ valueName: 'x', parentValueId: parent }],
        })
      ).statusCode,
      400,
    );
  });
});
