import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachEngine } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { defaultTemplate } from './helpers/assets.ts';
import { keywordTotal } from './helpers/search.ts';
import { startWorkers } from '../src/workers.ts';

// Decision 0024: with the workers on (system clock, a database file or PostgreSQL), the search
// indexer and the audit sealer run on the background thread with its own connection.
forEachEngine(
  'the background thread: search indexer and audit sealer off the thread that answers requests',
  (ctx) => {
    it('indexes for the next search (read-your-writes), seals the audit rows, and ends with the workers', async () => {
      const c = ctx();
      const org = await createTestOrg(c);
      const { id: template } = await defaultTemplate(c, org);
      const worker = startWorkers(c.deps);
      try {
        assert.ok(c.deps.runtime.search.indexer.thread, 'passes are asked of the background thread');
        for (let round = 0; round < 3; round++) {
          const res = await c.inject({
            method: 'POST',
            url: '/v1/assets/bulk',
            headers: org.admin.headers,
            payload: {
              assets: Array.from({ length: 400 }, (_, i) => ({
                metadataTemplateId: template,
                securityTemplateIds: [org.defaultTemplateId],
                metadata: [{ name: 'Title', value: `Wombat${round} ${i}` }],
              })),
            },
          });
          assert.equal(res.statusCode, 200, res.body);
          // The search right after the commit finds every asset: its pass ran on the thread after the request.
          assert.equal(await keywordTotal(c, org.admin.headers, `wombat${round}`), 400);
        }
        // The thread's sealer chains the audit rows (every second).
        const unsealed = async () =>
          Number(
            (
              await c.deps.db
                .selectFrom('audit_log')
                .select((eb) => eb.fn.countAll().as('n'))
                .where('org_id', '=', org.orgId)
                .where('hash', 'is', null)
                .executeTakeFirstOrThrow()
            ).n,
          );
        for (let i = 0; i < 100 && (await unsealed()) > 0; i++) await sleep(100);
        assert.equal(await unsealed(), 0);
      } finally {
        await worker.stop();
      }
      assert.equal(c.deps.runtime.search.indexer.thread, null, 'the thread is gone with the workers');
      // Without the thread, searches index in this thread again.
      const res = await c.inject({
        method: 'POST',
        url: '/v1/assets/bulk',
        headers: org.admin.headers,
        payload: {
          assets: [
            {
              metadataTemplateId: template,
              securityTemplateIds: [org.defaultTemplateId],
              metadata: [{ name: 'Title', value: 'Numbat' }],
            },
          ],
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(await keywordTotal(c, org.admin.headers, 'numbat'), 1);
    });
  },
  { realClock: true },
);
