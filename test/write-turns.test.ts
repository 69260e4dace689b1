import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { defaultTemplate } from './helpers/assets.ts';
import { keywordTotal } from './helpers/search.ts';
import { startWorkers } from '../src/workers.ts';

// Decision 0028: on SQLite the main thread and the background thread take turns to write (shared
// memory, the main thread first), so a request never sleeps in SQLite's busy handler waiting for the
// thread's index transactions; and the main thread's commits never run the WAL checkpoint.
// With the busy timeout at 0, a write that met the other thread's write lock would fail at once
// ("database is locked"): every request below succeeding shows that neither thread ever did.
forEachEngine(
  'SQLite write turns between the main thread and the background thread',
  (ctx) => {
    it('requests that write while the thread indexes never meet its write lock', async () => {
      const c = ctx();
      const org = await createTestOrg(c);
      const { id: template } = await defaultTemplate(c, org);
      const worker = startWorkers(c.deps);
      try {
        assert.ok(c.deps.runtime.search.indexer.thread, 'passes are asked of the background thread');
        for (let round = 0; round < 30; round++) {
          // A bulk write, and searches that each ask the thread for a pass (which writes documents) meanwhile.
          const [created, ...totals] = await Promise.all([
            c.inject({
              method: 'POST',
              url: '/v1/assets/bulk',
              headers: org.admin.headers,
              payload: {
                assets: Array.from({ length: 20 }, (_, i) => ({
                  metadataTemplateId: template,
                  securityTemplateIds: [org.defaultTemplateId],
                  metadata: [{ name: 'Title', value: `Quokka${round} ${i}` }],
                })),
              },
            }),
            keywordTotal(c, org.admin.headers, `quokka${Math.max(0, round - 1)}`),
            keywordTotal(c, org.admin.headers, 'quokka0'),
          ]);
          assert.equal(created.statusCode, 200, created.body);
          assert.ok(totals.every((n) => n === 0 || n === 20));
        }
        for (let round = 0; round < 30; round++)
          assert.equal(await keywordTotal(c, org.admin.headers, `quokka${round}`), 20);
        if (c.deps.engine === 'sqlite') {
          // The main connection does not checkpoint while the thread runs (the thread does, every second).
          const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(c.deps.db);
          assert.equal(rows[0]?.wal_autocheckpoint, 0);
        }
      } finally {
        await worker.stop();
      }
      if (c.deps.engine === 'sqlite') {
        // Alone again, the main connection checkpoints as SQLite does by default.
        const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(c.deps.db);
        assert.equal(rows[0]?.wal_autocheckpoint, 1000);
      }
    });
  },
  { realClock: true, env: { TESSERA_SQLITE_BUSY_TIMEOUT_MS: '0' } },
);
