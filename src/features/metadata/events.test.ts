import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Compile } from 'typebox/compile';
import { forEachEngine } from '../../../test/helpers/context.ts';
import { createTestOrg } from '../../../test/helpers/factories.ts';
import { EVENT_CATALOG, envelopeSchema, type EventType } from '../../core/events/index.ts';
import { startWorker } from '../../core/jobs/worker.ts';
import { metadataJobHandlers } from './index.ts';
import { applyMetadataToAssets } from '../assets/index.ts';
import { metadataApi } from '../../../test/helpers/metadata.ts';

const METADATA_EVENTS = Object.keys(EVENT_CATALOG).filter((t) => t.startsWith('metadata.')) as EventType[];

forEachEngine('metadata: events through the webhooks outbox', (ctx) => {
  it('every metadata event of the catalog is published in the transaction of its change, matching its schema', async () => {
    const org = await createTestOrg(ctx());
    const api = metadataApi(ctx(), org);
    const vocab = await api.vocabulary('Moods', ['Calm', 'Bold']);
    await api.call('PATCH', `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`, { add: ['Quiet'] }, 200);
    const attr = await api.attribute({
      name: 'Mood',
      type: 'controlledVocabulary',
      controlledVocabularyId: vocab.metadataDefinitionId,
    });
    await api.call('PATCH', `/v1/metadata/attributes/${attr.id}`, { facetable: true }, 200);
    const group = await api.group('Feel', [attr.id]);
    await api.call('PATCH', `/v1/metadata/groups/${group.id}`, { name: 'Feeling' }, 200);
    const template = await api.template('Mood Board', [group.id]);
    await api.call('PATCH', `/v1/metadata/template/${template.templateId}`, { name: 'Mood Boards' }, 200);
    await api.call('DELETE', `/v1/metadata/template/${template.templateId}`, undefined, 204);
    await api.call('DELETE', `/v1/metadata/groups/${group.id}`, undefined, 204);
    await api.call('DELETE', `/v1/metadata/attributes/${attr.id}`, undefined, 204);
    await api.call('DELETE', `/v1/metadata/vocabulary/${vocab.metadataDefinitionId}`, undefined, 200);
    await api.call('POST', '/v1/metadata/apply', {}, 202);
    const worker = startWorker({
      db: ctx().deps.db,
      engine: ctx().deps.engine,
      clock: ctx().deps.clock,
      log: ctx().deps.log,
      signal: ctx().deps.jobs,
      handlers: metadataJobHandlers(ctx().deps, { applyHandlers: { assets: applyMetadataToAssets } }),
      pollMs: 3_600_000,
    });
    await worker.drain();
    await worker.stop();

    const rows = await ctx()
      .deps.db.selectFrom('events')
      .select(['type', 'body'])
      .where('org_id', '=', org.orgId)
      .where('type', 'like', 'metadata.%')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      [...new Set(rows.map((r) => r.type))].sort(),
      [...METADATA_EVENTS].sort(),
      'each metadata event type was published',
    );
    for (const row of rows) {
      const body = JSON.parse(row.body);
      assert.ok(
        Compile(envelopeSchema(row.type as EventType)).Check(body),
        `${row.type} matches its schema: ${row.body}`,
      );
    }
    const one = (type: string) => JSON.parse(rows.find((r) => r.type === type)!.body);
    assert.deepEqual(one('metadata.group.created').group, { id: group.id, name: 'Feel' });
    assert.deepEqual(one('metadata.group.updated').group, { id: group.id, name: 'Feeling' });
    assert.equal(one('metadata.attribute.updated').attribute.id, attr.id);
    assert.equal(one('metadata.attribute.updated').attribute.searchField, 'mood');
    assert.deepEqual(
      one('metadata.vocabulary.updated').vocabulary.values.added.map((v: any) => v.name),
      ['Quiet'],
    );
    assert.equal(one('metadata.changes.applied').action.changesApplied > 0, true);
    // The webhooks feature delivers from this table: a subscription to metadata.* would receive each row.
  });
});
