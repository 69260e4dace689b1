import assert from 'node:assert/strict';
import { it } from 'node:test';
import { JOB_CATALOG, payloadProblem } from '../src/core/jobs/catalog.ts';
import { enqueueRawJob } from '../src/core/jobs/queue.ts';
import { startWorker } from '../src/core/jobs/worker.ts';
import { jobHandlers } from '../src/workers.ts';
import { forEachEngine } from './helpers/context.ts';
import {
  callsTo,
  exportedStringConstants,
  firstPropertyNamed,
  parseSource,
  sourceFiles,
  stringValue,
  ts,
  where,
} from './helpers/source.ts';

const sources = sourceFiles('src').map((path) => parseSource(path));

/** `export const NAME = 'value'` across src/, to resolve the job-name constants enqueue calls use. */
const constants = new Map<string, string>();
for (const source of sources) {
  for (const [name, value] of exportedStringConstants(source))
    if (/^[A-Z][A-Z0-9_]*$/.test(name)) constants.set(name, value);
}

/**
 * Every job type src/ enqueues: the `type` property of each enqueueJob and createAction call (an
 * Action is a job of its type), read from the syntax tree, so wrapping and quotes do not matter.
 */
function enqueuedTypes(): { name: string; where: string }[] {
  const out: { name: string; where: string }[] = [];
  for (const source of sources) {
    for (const call of callsTo(source, new Set(['enqueueJob', 'createAction']))) {
      const property = call.arguments.map((a) => firstPropertyNamed(a, 'type')).find((p) => p !== undefined);
      if (property === undefined) continue;
      const at = where(source, call);
      let expr: ts.Expression = ts.isPropertyAssignment(property) ? property.initializer : property.name;
      while (ts.isAsExpression(expr) || ts.isParenthesizedExpression(expr)) expr = expr.expression;
      // actions.service.ts passes a type through (spec.type from its callers, action.type when an
      // Action resumes): the callers that first enqueue it are scanned themselves.
      if (ts.isPropertyAccessExpression(expr)) continue;
      const name = stringValue(expr) ?? (ts.isIdentifier(expr) ? constants.get(expr.text) : undefined);
      assert.ok(name, `${at}: the job type ${expr.getText(source)} is not a string constant this test can resolve`);
      out.push({ name, where: at });
    }
  }
  return out;
}

it('every job type enqueued anywhere in src/ has a catalog entry and a handler; every entry is enqueued somewhere and handled', async () => {
  const enqueued = enqueuedTypes();
  assert.ok(enqueued.length >= 10, `found only ${enqueued.length} enqueue sites: the scan is broken`);
  // jobHandlers only builds closures over deps; none of them runs here.
  const handlers = jobHandlers({} as Parameters<typeof jobHandlers>[0]);
  const catalog = Object.keys(JOB_CATALOG).sort();
  for (const { name, where } of enqueued) {
    assert.ok(Object.hasOwn(JOB_CATALOG, name), `${where} enqueues ${name}, which core/jobs/catalog.ts does not list`);
    assert.equal(
      typeof (handlers as Record<string, unknown>)[name],
      'function',
      `${where} enqueues ${name}, which src/workers.ts has no handler for`,
    );
  }
  assert.deepEqual(Object.keys(handlers).sort(), catalog, 'src/workers.ts handles exactly the catalog');
  assert.deepEqual(
    [...new Set(enqueued.map((e) => e.name))].sort(),
    catalog,
    'every catalog entry is enqueued somewhere',
  );
});

it('payloads are checked against the catalog: what the enqueuers send fits, anything else is named', async () => {
  assert.equal(await payloadProblem('assets.renditions', { assetId: 'a', force: true }), null);
  assert.equal(
    await payloadProblem('metadata.template.action_object', { templateId: 't', actionObjectId: null }),
    null,
  );
  assert.equal(await payloadProblem('auth.cleanup', null), null);
  assert.equal(await payloadProblem('metadata.apply', { actionId: 'x' }), null);
  assert.match((await payloadProblem('mail.send', { mail: 'x' })) ?? '', /mailId/);
  assert.notEqual(await payloadProblem('assets.upload.watch', null), null);
  // Types outside the catalog (the worker's own tests) are not checked.
  assert.equal(await payloadProblem('test.anything', 42), null);
});

forEachEngine('job catalog at run time', (ctx) => {
  it('a claimed job whose payload does not fit its catalog entry goes dead without reaching its handler', async () => {
    const deps = ctx().deps;
    const id = await enqueueRawJob(deps.db, deps.clock.now(), {
      type: 'mail.send',
      payload: { notAMailId: 1 },
      maxAttempts: 5,
    });
    const worker = startWorker({
      db: deps.db,
      engine: deps.engine,
      clock: deps.clock,
      log: deps.log,
      signal: deps.jobs,
      handlers: jobHandlers(deps),
      pollMs: 3_600_000,
    });
    try {
      await worker.drain();
    } finally {
      await worker.stop();
    }
    const row = await deps.db
      .selectFrom('jobs')
      .select(['status', 'attempts', 'last_error'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'dead');
    assert.equal(row.attempts, 1);
    assert.match(row.last_error ?? '', /does not match the job catalog: .*mailId/);
  });
});
