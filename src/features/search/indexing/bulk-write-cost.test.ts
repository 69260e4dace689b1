// Migration 0069 and the indexer's insert (issue 30 item 5, decision 0037): less database work per
// bulk-created asset, the same answers. Events queue for their fan-out by statement on PostgreSQL;
// search_doc_sorts keeps only the index a range filter reads (numbers); PostgreSQL drops the
// indexed_at index only SQLite's in-memory index reads; PostgreSQL takes new doc_nos from the insert.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql, type CompiledQuery, type KyselyPlugin } from 'kysely';
import { forEachEngine, type TestContext } from '../../../../test/helpers/context.ts';
import { createTestOrg } from '../../../../test/helpers/factories.ts';
import { createTemplate, docInput } from '../../../../test/helpers/search.ts';
import type { Db } from '../../../core/db/connect.ts';
import { publishEvents } from '../../../core/events/index.ts';
import { newId } from '../../../core/ids.ts';
import { upsertDocuments } from './search-index.repo.ts';

/** Definitions of the table's indexes by name (both engines). */
async function indexes(c: TestContext, table: string): Promise<Map<string, string>> {
  const rows =
    c.engine === 'postgres'
      ? (
          await sql<{
            name: string;
            def: string;
          }>`select indexname as name, indexdef as def from pg_indexes where tablename = ${table}`.execute(c.deps.db)
        ).rows
      : (
          await sql<{
            name: string;
            def: string | null;
          }>`select name, sql as def from sqlite_master where type = 'index' and tbl_name = ${table}`.execute(c.deps.db)
        ).rows;
  return new Map(rows.map((r) => [r.name, (r.def ?? '').toLowerCase()]));
}

/** The query plan of `q`, with sequential scans off on PostgreSQL (so a usable index shows). */
async function plan(c: TestContext, q: CompiledQuery): Promise<string> {
  if (c.engine === 'sqlite') {
    const rows = await c.deps.db.executeQuery<{ detail: string }>({ ...q, sql: `explain query plan ${q.sql}` });
    return rows.rows.map((r) => r.detail).join(' | ');
  }
  return c.deps.db.connection().execute(async (conn) => {
    await sql`set enable_seqscan = off`.execute(conn);
    try {
      const rows = await conn.executeQuery<{ 'QUERY PLAN': string }>({ ...q, sql: `explain ${q.sql}` });
      return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      await sql`reset enable_seqscan`.execute(conn);
    }
  });
}

function recorded(db: Db): { db: Db; queries: string[] } {
  const queries: string[] = [];
  const recorder: KyselyPlugin = {
    transformQuery: (args) => {
      queries.push(db.getExecutor().compileQuery(args.node, args.queryId).sql);
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { db: db.withPlugin(recorder), queries };
}

forEachEngine('bulk write cost (migration 0069)', (ctx) => {
  it('queues every event of a multi-row insert for its fan-out, and none of a rolled-back one; on PostgreSQL by one statement trigger', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const event = () => ({
      orgId: org.orgId,
      type: 'asset.created' as const,
      actor: null,
      data: { asset: { id: newId(c.clock.now()), filename: 'a.jpg', metadataTemplate: null, securityTemplates: [] } },
    });
    const queued = async (ids: readonly string[]) =>
      (await c.deps.db.selectFrom('event_fanout_queue').select('event_id').where('event_id', 'in', ids).execute())
        .map((r) => r.event_id)
        .sort();
    let rolledBack: string[] = [];
    await assert.rejects(
      c.deps.db.transaction().execute(async (trx) => {
        rolledBack = await publishEvents(trx, c.clock.now(), [event(), event()]);
        throw new Error('the change fails');
      }),
      /the change fails/,
    );
    assert.deepEqual(await queued(rolledBack), []);
    const ids = await c.deps.db
      .transaction()
      .execute((trx) => publishEvents(trx, c.clock.now(), [event(), event(), event()]));
    assert.deepEqual(await queued(ids), [...ids].sort());
    const rows = await c.deps.db
      .selectFrom('event_fanout_queue as q')
      .innerJoin('events as e', 'e.id', 'q.event_id')
      .select(['q.created_at as queued_at', 'e.created_at'])
      .where('q.event_id', 'in', ids)
      .execute();
    for (const r of rows) assert.equal(Number(r.queued_at), Number(r.created_at));
    if (c.engine === 'postgres') {
      // tgtype bit 0: a row trigger. The fan-out trigger is the statement's, reading its transition table.
      const { rows: triggers } = await sql<{ row: boolean }>`
        select (tgtype & 1) = 1 as row from pg_trigger where tgname = 'tessera_events_fanout'`.execute(c.deps.db);
      assert.deepEqual(triggers, [{ row: false }]);
    }
  });

  it('keeps only the search_doc_sorts index a range filter reads, and range filters still read it', async () => {
    const c = ctx();
    const sorts = await indexes(c, 'search_doc_sorts');
    assert.ok(!sorts.has('search_doc_sorts_txt_idx'), [...sorts.keys()].join(', '));
    assert.match(sorts.get('search_doc_sorts_num_idx') ?? '', /where \(?num is not null\)?/);
    const org = await createTestOrg(c);
    const range = c.deps.db
      .selectFrom('search_doc_sorts as s')
      .select('s.doc_no')
      .where('s.org_id', '=', org.orgId)
      .where('s.field', '=', 'shoot_date')
      .where(sql<boolean>`s.num is not null`)
      .where('s.num', '>=', 1)
      .where('s.num', '<=', 2)
      .compile();
    assert.match(await plan(c, range), /search_doc_sorts_num_idx/);
    // SQLite's in-memory index reads documents by indexed_at; no PostgreSQL query does.
    assert.equal((await indexes(c, 'search_docs')).has('search_docs_indexed_idx'), c.engine === 'sqlite');
  });

  it('gives each new document its own doc_no in every side table; PostgreSQL reads them from the insert', async () => {
    const c = ctx();
    const org = await createTestOrg(c);
    const template = await createTemplate(c, org.orgId, {});
    const docs = Array.from({ length: 5 }, (_, i) =>
      docInput(org.orgId, {
        securityTemplateIds: [template],
        filename: `doc-${i}.jpg`,
        sorts: [
          { field: 'rank', num: i },
          { field: 'label', txt: `Label ${i}` },
        ],
      }),
    );
    const seen = recorded(c.deps.db);
    await seen.db.transaction().execute((trx) => upsertDocuments(trx, c.engine, docs, c.clock.now()));
    const readBack = seen.queries.filter((q) => /^select "doc_no", "asset_id" from "search_docs"/.test(q)).length;
    // One lookup of existing documents per batch; SQLite reads the new numbers back with a second.
    assert.equal(readBack, c.engine === 'postgres' ? 1 : 2, seen.queries.join('\n'));
    const byAsset = new Map(
      (
        await c.deps.db
          .selectFrom('search_docs')
          .select(['doc_no', 'asset_id', 'filename'])
          .where('org_id', '=', org.orgId)
          .execute()
      ).map((r) => [r.asset_id, r]),
    );
    assert.equal(byAsset.size, 5);
    for (const [i, d] of docs.entries()) {
      const no = byAsset.get(d.assetId)!.doc_no;
      assert.equal(byAsset.get(d.assetId)!.filename, `doc-${i}.jpg`);
      const sortRows = await c.deps.db
        .selectFrom('search_doc_sorts')
        .select(['field', 'num', 'txt'])
        .where('doc_no', '=', no)
        .orderBy('field')
        .execute();
      assert.deepEqual(
        sortRows.map((r) => [r.field, r.num === null ? null : Number(r.num), r.txt]),
        [
          ['label', null, `label ${i}`],
          ['rank', i, null],
        ],
      );
      const templates = await c.deps.db
        .selectFrom('search_doc_templates')
        .select('template_id')
        .where('doc_no', '=', no)
        .execute();
      assert.deepEqual(templates, [{ template_id: template }]);
    }
  });
});
