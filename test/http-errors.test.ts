import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine, json } from './helpers/context.ts';
import { createTestOrg } from './helpers/factories.ts';
import { toAppError } from '../src/core/http/error-handler.ts';

forEachEngine('HTTP error handling', (ctx) => {
  const expectError = (
    res: { statusCode: number; headers: Record<string, unknown>; json(): any },
    status: number,
    code: string,
  ) => {
    assert.equal(res.statusCode, status);
    const body = res.json();
    assert.equal(body.status, 'error');
    assert.equal(body.code, code);
    assert.equal(typeof body.message, 'string');
    assert.equal(body.requestId, res.headers['x-request-id']);
    assert.match(String(res.headers['content-type']), /application\/json/);
  };

  it('answers an unknown route with a JSON 404', async () => {
    const res = await ctx().inject({ method: 'GET', url: '/v1/nope' });
    expectError(res, 404, 'not_found');
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/v1/security/groups',
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload: '{"groupName": ',
    });
    expectError(res, 400, 'invalid_json');
  });

  it('answers an empty JSON body with 400', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/v1/security/groups',
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload: '',
    });
    assert.equal(res.statusCode, 400);
  });

  it('answers a wrong content type with 415', async () => {
    const org = await createTestOrg(ctx());
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      const res = await ctx().app.inject({
        method: 'POST',
        url: '/v1/security/groups',
        headers: { ...org.admin.headers, 'content-type': type },
        payload: 'groupName=x',
      });
      expectError(res, 415, 'unsupported_media_type');
    }
  });

  it('answers an oversized body with 413', async () => {
    const org = await createTestOrg(ctx());
    const payload = JSON.stringify({ groupName: 'x', description: 'y'.repeat(2 * 1024 * 1024) });
    const res = await ctx().app.inject({
      method: 'POST',
      url: '/v1/security/groups',
      headers: { ...org.admin.headers, 'content-type': 'application/json' },
      payload,
    });
    expectError(res, 413, 'payload_too_large');
  });

  it('answers schema violations with 400 and names each field', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({
      method: 'POST',
      url: '/v1/security/groups',
      headers: org.admin.headers,
      payload: { description: 5 },
    });
    expectError(res, 400, 'validation_failed');
    assert.deepEqual(json(res).details[0], { field: 'body.groupName', message: 'is required' });
    const bad = await ctx().inject({
      method: 'GET',
      url: '/v1/roles/privileges?filter=maybe',
      headers: org.admin.headers,
    });
    expectError(bad, 400, 'validation_failed');
    assert.equal(json(bad).details[0].field, 'query.filter');
  });

  it('answers a JSON array or scalar where an object is expected with 400', async () => {
    const org = await createTestOrg(ctx());
    for (const payload of ['[]', '"text"', '42', 'null']) {
      const res = await ctx().app.inject({
        method: 'POST',
        url: '/v1/security/groups',
        headers: { ...org.admin.headers, 'content-type': 'application/json' },
        payload,
      });
      assert.equal(res.statusCode, 400, `${payload}: ${res.body}`);
    }
  });

  it('puts an X-Request-Id on every response and keeps a sane incoming one', async () => {
    const ok = await ctx().inject({ method: 'GET', url: '/healthz' });
    assert.match(String(ok.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const kept = await ctx().inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'client-chosen-id-123' },
    });
    assert.equal(kept.headers['x-request-id'], 'client-chosen-id-123');
    const replaced = await ctx().inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'bad id with spaces\n' },
    });
    assert.notEqual(replaced.headers['x-request-id'], 'bad id with spaces\n');
    const missing = await ctx().inject({ method: 'GET', url: '/nowhere' });
    assert.ok(missing.headers['x-request-id']);
  });

  it('never leaks stack traces or SQL', async () => {
    const org = await createTestOrg(ctx());
    const res = await ctx().inject({ method: 'GET', url: `/v1/user/${'a'.repeat(600)}`, headers: org.admin.headers });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, res.body);
    assert.doesNotMatch(res.body, /at .*\.ts:\d+|select |SQLITE|syntax/i);
  });

  it('serves liveness and readiness', async () => {
    assert.deepEqual(json(await ctx().inject({ method: 'GET', url: '/healthz' })), { status: 'ok' });
    const ready = await ctx().inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(json(ready).checks, { database: 'ok', disk_space: 'ok', disk_writable: 'ok', storage: 'ok' });
  });

  it('a write that lost a race is a 409 (or 503 while SQLite is busy), never a 500: the database errors as the drivers raise them', async () => {
    const now = ctx().deps.clock.now();
    // A real foreign-key violation from this engine's driver: a member of a collection that is gone.
    const error = await ctx()
      .deps.db.insertInto('collection_members')
      .values({ org_id: 'o', collection_id: 'no-such-collection', file_id: 'f', position: 0, added_at: now } as never)
      .execute()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(error, 'the insert should have failed');
    const gone = toAppError(error);
    assert.equal(gone.status, 409);
    assert.match(gone.message, /deleted by a concurrent request; nothing was changed/);
    // PostgreSQL's deadlock victim and serialization failure, SQLite's busy writer (codes as the drivers set them).
    assert.equal(toAppError(Object.assign(new Error('deadlock detected'), { code: '40P01' })).status, 409);
    assert.equal(toAppError(Object.assign(new Error('could not serialize access'), { code: '40001' })).status, 409);
    const busy = toAppError(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }));
    assert.equal(busy.status, 503);
    assert.equal(busy.headers?.['retry-after'], '1');
    // Anything else stays a masked 500.
    assert.equal(toAppError(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' })).status, 500);
  });
});
