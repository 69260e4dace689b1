// The once-compiled multi-row insert of the delivery hot path, on both engines.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { it } from 'node:test';
import { forEachEngine, json } from '../../../test/helpers/context.ts';
import { createTestOrg } from '../../../test/helpers/factories.ts';
import type { WebhookAttemptsTable } from './schema.ts';
import { newId } from '../ids.ts';
import { batchInsert } from './batch-insert.ts';

const insertAttempts = batchInsert('webhook_attempts', [
  'id',
  'org_id',
  'endpoint_id',
  'message_id',
  'attempt',
  'at',
  'ok',
  'status_code',
  'latency_ms',
  'response_body',
  'error_class',
]);

forEachEngine('webhook batch insert', (ctx) => {
  it('writes every row and value (nulls, big numbers, any text included), whatever the batch size, and refuses a row of another shape', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [{ description: 'Batch', url: 'http://127.0.0.1:9/hook', eventTypes: ['*'] }],
    });
    assert.equal(res.statusCode, 200, res.body);
    const endpointId = json(res).id as string;
    const row = (i: number): WebhookAttemptsTable => ({
      id: newId(),
      org_id: org.orgId,
      endpoint_id: endpointId,
      message_id: `m-${i}`,
      attempt: i,
      at: 1_764_000_000_000 + i,
      ok: i % 2,
      status_code: i % 3 === 0 ? null : 200 + i,
      latency_ms: i * 7,
      error_class: i % 2 === 1 ? null : 'http_status',
      // Text that array literals (PostgreSQL's unnest path) must escape, and strings that look like NULL.
      response_body:
        i % 5 === 0
          ? null
          : i % 4 === 0
            ? `{"a": [1, 2]}, "quoted" \\ back\\slash 'single' é 🎉 ${i}`
            : i % 7 === 0
              ? 'NULL'
              : i === 11
                ? ''
                : `body ${i}`,
    });
    const first = Array.from({ length: 3 }, (_, i) => row(i));
    const second = Array.from({ length: 7 }, (_, i) => row(10 + i));
    const third = Array.from({ length: 3 }, (_, i) => row(20 + i)); // a size seen before: the same compiled text
    for (const batch of [first, second, third])
      await ctx()
        .deps.db.transaction()
        .execute((trx) => insertAttempts(trx, batch));
    const stored = await ctx()
      .deps.db.selectFrom('webhook_attempts')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .orderBy('attempt')
      .execute();
    const expected = [...first, ...second, ...third].sort((a, b) => a.attempt - b.attempt);
    assert.deepEqual(
      stored.map((r) => ({ ...r, at: Number(r.at) })),
      expected,
    );

    // Strings PostgreSQL text cannot hold as they are: a lone surrogate (a pair cut in half) and a NUL.
    // They are stored as U+FFFD (SQLite keeps a NUL); look-alike text made of backslashes stays as it is.
    const awkward = [
      'cut \ud83d',
      'nul \u0000 x',
      String.raw`back\u0000slash \ud800 \\u0000`,
      'pair 🎉',
      'low \udc00 first',
    ];
    const odd = awkward.map((text, i) => ({ ...row(40 + i), response_body: text }));
    await insertAttempts(ctx().deps.db, odd);
    const kept = await ctx()
      .deps.db.selectFrom('webhook_attempts')
      .select('response_body')
      .where('endpoint_id', '=', endpointId)
      .where('attempt', '>=', 40)
      .orderBy('attempt')
      .execute();
    const nul = ctx().engine === 'postgres' ? '\uFFFD' : '\u0000';
    assert.deepEqual(
      kept.map((r) => r.response_body),
      ['cut \uFFFD', `nul ${nul} x`, String.raw`back\u0000slash \ud800 \\u0000`, 'pair 🎉', 'low \uFFFD first'],
    );

    await assert.rejects(
      insertAttempts(ctx().deps.db, [{ ...row(30), extra: 1 } as WebhookAttemptsTable]),
      /exactly the columns/,
    );
    const { error_class: _left, ...short } = row(31);
    await assert.rejects(insertAttempts(ctx().deps.db, [short as WebhookAttemptsTable]), /exactly the columns/);
  });
  it('SQLite: batches of any size run as power-of-two chunks, so few statement texts are ever prepared', async (t) => {
    if (ctx().engine !== 'sqlite') return t.skip('SQLite only');
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/webhooks/endpoint',
      headers: org.admin.headers,
      payload: [{ description: 'Chunks', url: 'http://127.0.0.1:9/hook', eventTypes: ['*'] }],
    });
    const endpointId = json(res).id as string;
    const row = (i: number): WebhookAttemptsTable => ({
      id: newId(),
      org_id: org.orgId,
      endpoint_id: endpointId,
      message_id: `c-${i}`,
      attempt: i,
      at: 1_764_000_000_000 + i,
      ok: 1,
      status_code: 200,
      latency_ms: i,
      response_body: null,
      error_class: null,
    });
    // Every statement text run, seen at better-sqlite3's statements.
    const Sqlite = createRequire(import.meta.url)('better-sqlite3');
    const proto = Object.getPrototypeOf(new Sqlite(':memory:').prepare('select 1'));
    const texts = new Set<string>();
    const inner = proto.run;
    proto.run = function (this: { source: string }, ...args: unknown[]) {
      if (this.source.startsWith('insert into "webhook_attempts"')) texts.add(this.source);
      return inner.apply(this, args);
    };
    let next = 0;
    try {
      for (let size = 1; size <= 40; size++) {
        const batch = Array.from({ length: size }, () => row(next++));
        await insertAttempts(ctx().deps.db, batch);
      }
    } finally {
      proto.run = inner;
    }
    // 1, 2, 4, 8, 16, 32 rows; one text per batch size would be forty.
    assert.equal(texts.size, 6);
    const stored = await ctx()
      .deps.db.selectFrom('webhook_attempts')
      .select('attempt')
      .where('endpoint_id', '=', endpointId)
      .orderBy('attempt')
      .execute();
    assert.deepEqual(
      stored.map((r) => r.attempt),
      Array.from({ length: next }, (_, i) => i),
    );
  });
});
